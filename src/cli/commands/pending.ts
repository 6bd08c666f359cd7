import chalk from "chalk";
import { olderThanMs, withPendingRunStores } from "../pending-run-stores.js";
import { Table } from "../table.js";

export interface PendingOptions {
  olderThan?: string;
  json?: boolean;
  config?: string;
}

/**
 * `chat-serve pending`: the pending interrupt runs of the durable checkpointer, oldest
 * activity first, for operators. Reads only; never creates anything.
 */
export async function pendingCommand(options: PendingOptions): Promise<void> {
  // With no --older-than, every pending run: idle since before the end of time.
  const cutoff = options.olderThan === undefined ? new Date(8.64e15) : new Date(Date.now() - olderThanMs(options.olderThan));
  const none = (reason: string) => process.stdout.write(options.json === true ? "[]\n" : `no pending runs to list: ${reason}\n`);
  await withPendingRunStores(options, none, async (backends) => {
    const rows = (await backends.pendingRuns.listIdleSince(cutoff)).map((entry) => ({
      model: entry.model,
      runId: entry.runId,
      scope: entry.scope ?? null,
      createdAt: entry.createdAt.toISOString(),
      lastActivityAt: entry.lastActivityAt.toISOString(),
    }));
    if (options.json === true) {
      process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
      return;
    }
    if (rows.length === 0) {
      process.stdout.write(
        options.olderThan === undefined ? "no pending runs\n" : `no pending runs idle for more than ${options.olderThan}\n`,
      );
      return;
    }
    const table = new Table({
      head: ["model", "run id", "scope", "created", "last activity"].map((title) => chalk.bold(title)),
      style: { head: [], border: [] },
    });
    for (const row of rows) table.push([row.model, row.runId, row.scope ?? "-", row.createdAt, row.lastActivityAt]);
    process.stdout.write(`${table.toString()}\n${rows.length} pending run${rows.length === 1 ? "" : "s"}\n`);
  });
}
