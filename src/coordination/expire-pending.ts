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
  const results: IdleRunResult[] = [];
  for (const entry of await stores.pendingRuns.listIdleSince(cutoff)) {
    results.push({ entry, outcome: await deleteOne(stores, entry, options) });
  }
  return results;
}

/** One pending run, under its lease: deleted (or kept as an expiry tombstone), unless it is in use. */
async function deleteOne(
  stores: PendingRunStores,
  entry: PendingRunEntry,
  options: { mode: "purge" | "expire"; dryRun?: boolean },
): Promise<IdleRunOutcome> {
  const lease = await stores.coordinator.tryAcquire(entry.key);
  if (lease === null) return "skipped: in use";
  try {
    if (options.dryRun === true) return "would remove";
    const saver = stores.checkpointer as { deleteThread(threadId: string): Promise<void> };
    // A run paused on a conversation's thread leaves the thread: it is the conversation.
    if (entry.thread === undefined) await saver.deleteThread(entry.key);
    if (options.mode === "expire") await stores.pendingRuns.markExpired(entry.key);
    else await stores.pendingRuns.remove(entry.key);
    return options.mode === "expire" ? "expired" : "removed";
  } finally {
    await lease.release();
  }
}

/**
 * Ends one paused run now, as if its time to answer had run out: its checkpoint deleted and
 * its entry kept as an expiry tombstone, so a later resume is told it expired. False when
 * the run is not pending (or is being resumed right now).
 */
export async function expirePendingRun(stores: PendingRunStores, key: string): Promise<boolean> {
  const entry = await stores.pendingRuns.get(key);
  if (entry === undefined || entry.expiredAt !== undefined) return false;
  return (await deleteOne(stores, entry, { mode: "expire" })) === "expired";
}
