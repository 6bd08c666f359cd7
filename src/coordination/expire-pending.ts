import type { PendingRunEntry, PendingRunIndex } from "./pending-run-index.js";
import type { RunCoordinator } from "./run-coordinator.js";

/** What deleting idle pending runs needs: the index, the coordinator and the checkpointer. */
export interface PendingRunStores {
  pendingRuns: PendingRunIndex;
  coordinator: RunCoordinator;
  checkpointer: unknown;
}

export type IdleRunOutcome = "removed" | "would remove" | "expired" | "skipped: in use";

export interface IdleRunResult {
  entry: PendingRunEntry;
  outcome: IdleRunOutcome;
}

/**
 * Deletes the pending runs idle since before `cutoff`: each run's lease is taken first (a run
 * being resumed right now is skipped), then its checkpoint is deleted and its index entry
 * removed (`purge-pending`) or kept as an expiry tombstone (the server's sweeper, so a late
 * resume is told the run expired). `dryRun` deletes nothing.
 */
export async function deleteIdleRuns(
  stores: PendingRunStores,
  cutoff: Date,
  options: { mode: "purge" | "expire"; dryRun?: boolean },
): Promise<IdleRunResult[]> {
  const saver = stores.checkpointer as { deleteThread(threadId: string): Promise<void> };
  const results: IdleRunResult[] = [];
  for (const entry of await stores.pendingRuns.listIdleSince(cutoff)) {
    const lease = await stores.coordinator.tryAcquire(entry.key);
    if (lease === null) {
      results.push({ entry, outcome: "skipped: in use" });
      continue;
    }
    try {
      if (options.dryRun === true) {
        results.push({ entry, outcome: "would remove" });
        continue;
      }
      // A run paused on a conversation's thread leaves the thread: it is the conversation.
      if (entry.thread === undefined) await saver.deleteThread(entry.key);
      if (options.mode === "expire") await stores.pendingRuns.markExpired(entry.key);
      else await stores.pendingRuns.remove(entry.key);
      results.push({ entry, outcome: options.mode === "expire" ? "expired" : "removed" });
    } finally {
      await lease.release();
    }
  }
  return results;
}
