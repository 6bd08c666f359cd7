import chalk from "chalk";
import Table from "cli-table3";
import { loadConfig } from "../../config/load-config.js";
import { backendsFromConfig } from "../../server/backends.js";
import { olderThanMs } from "./purge-pending.js";

export interface PendingOptions {
  olderThan?: string;
  json?: boolean;
  config?: string;
}

// Postgres: relation does not exist.
const UNDEFINED_TABLE = "42P01";

/**
 * `chat-serve pending`: the pending interrupt runs of the durable checkpointer, oldest
 * activity first, for operators. Reads only; never creates anything.
 */
export async function pendingCommand(options: PendingOptions): Promise<void> {
  const idleMs = options.olderThan === undefined ? 0 : olderThanMs(options.olderThan);

  const loaded = await loadConfig({ configPath: options.config });
  const none = (reason: string) => process.stdout.write(options.json === true ? "[]\n" : `no pending runs to list: ${reason}\n`);
  const { checkpointer } = loaded.config;
  if (checkpointer.kind === "memory") {
    none(`${loaded.displayPath} uses the memory checkpointer, whose pending runs live and end inside the running server`);
    return;
  }
  const backends = await backendsFromConfig(loaded.config, { timeoutMs: loaded.config.backendTimeoutMs });
  try {
    let entries: Awaited<ReturnType<typeof backends.pendingRuns.listIdleSince>>;
    try {
      // With no --older-than, every pending run: idle since before the end of time.
      const cutoff = options.olderThan === undefined ? new Date(8.64e15) : new Date(Date.now() - idleMs);
      entries = await backends.pendingRuns.listIdleSince(cutoff);
    } catch (error) {
      if ((error as { code?: string }).code !== UNDEFINED_TABLE) throw error;
      none(`schema '${checkpointer.schema}' has no chat-serve tables (has a server run with this config?)`);
      return;
    }
    const rows = entries.map((entry) => ({
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
  } finally {
    await backends.close();
  }
}
