import chalk from "chalk";
import { deleteIdleRuns } from "../../coordination/expire-pending.js";
import { olderThanMs, withPendingRunStores } from "../pending-run-stores.js";
import { Table } from "../table.js";

export interface PurgeOptions {
  olderThan: string;
  dryRun?: boolean;
  json?: boolean;
  config?: string;
}

/**
 * `chat-serve purge-pending`: deletes pending interrupt checkpoints (and their index rows)
 * idle for longer than the duration. Each run's lease is taken first, so a run being resumed
 * right now is skipped.
 */
export async function purgePendingCommand(options: PurgeOptions): Promise<void> {
  const idleMs = olderThanMs(options.olderThan);
  const nothing = (reason: string) => process.stdout.write(options.json === true ? "[]\n" : `nothing to purge: ${reason}\n`);
  await withPendingRunStores(options, nothing, async (backends) => {
    const outcomes = await deleteIdleRuns(
      { pendingRuns: backends.pendingRuns, coordinator: backends.runCoordinator, checkpointer: backends.checkpointer },
      new Date(Date.now() - idleMs),
      { mode: "purge", dryRun: options.dryRun === true },
    );
    const results = outcomes.map(({ entry, outcome }) => ({
      model: entry.model,
      runId: entry.runId,
      key: entry.key,
      lastActivity: entry.lastActivityAt.toISOString(),
      outcome,
    }));
    if (options.json === true) {
      process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
      return;
    }
    if (results.length === 0) {
      process.stdout.write(`no pending runs idle for more than ${options.olderThan}\n`);
      return;
    }
    const table = new Table({
      head: ["model", "run id", "last activity", "result"].map((title) => chalk.bold(title)),
      style: { head: [], border: [] },
    });
    for (const result of results) table.push([result.model, result.runId, result.lastActivity, result.outcome]);
    process.stdout.write(`${table.toString()}\n`);
    const removed = results.filter((result) => result.outcome !== "skipped: in use").length;
    const verb = options.dryRun === true ? "would remove" : "removed";
    process.stdout.write(`${verb} ${removed} of ${results.length} pending run${results.length === 1 ? "" : "s"}\n`);
  });
}
