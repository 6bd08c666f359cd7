import chalk from "chalk";
import Table from "cli-table3";
import { loadConfig } from "../../config/load-config.js";
import { UserError } from "../../errors/catalogue.js";
import { backendsFromConfig } from "../../server/backends.js";

export interface PurgeOptions {
  olderThan: string;
  dryRun?: boolean;
  json?: boolean;
  config?: string;
}

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `90m`, `12h`, `7d` (also `s` and `ms`) in milliseconds. */
function parseDuration(text: string): number {
  const match = /^(\d+)(ms|s|m|h|d)$/u.exec(text.trim());
  if (match === null) throw new UserError(`--older-than must be a duration like 90m, 12h or 7d (got '${text}')`);
  return Number(match[1]) * UNITS[match[2]!]!;
}

type Outcome = "removed" | "would remove" | "skipped: in use";

interface PurgedRun {
  model: string;
  runId: string;
  key: string;
  lastActivity: string;
  outcome: Outcome;
}

// Postgres: relation does not exist.
const UNDEFINED_TABLE = "42P01";

/**
 * `chat-serve purge-pending`: deletes pending interrupt checkpoints (and their index rows)
 * idle for longer than the duration. Each run's lease is taken first, so a run being resumed
 * right now is skipped.
 */
export async function purgePendingCommand(options: PurgeOptions): Promise<void> {
  const idleMs = parseDuration(options.olderThan);
  const loaded = await loadConfig({ configPath: options.config });
  // Nothing to purge is a success: a scheduled purge must not fail for it.
  const nothing = (reason: string) => process.stdout.write(options.json === true ? "[]\n" : `nothing to purge: ${reason}\n`);
  const { checkpointer } = loaded.config;
  if (checkpointer.kind === "memory") {
    nothing(`${loaded.displayPath} uses the memory checkpointer, whose pending runs live and end inside the running server`);
    return;
  }
  const backends = await backendsFromConfig(loaded.config, { timeoutMs: loaded.config.backendTimeoutMs });
  try {
    // Never creates anything: a mistyped schema must not gain tables from a purge.
    const saver = backends.checkpointer as { deleteThread(threadId: string): Promise<void> };
    let idle: Awaited<ReturnType<typeof backends.pendingRuns.listIdleSince>>;
    try {
      idle = await backends.pendingRuns.listIdleSince(new Date(Date.now() - idleMs));
    } catch (error) {
      if ((error as { code?: string }).code !== UNDEFINED_TABLE) throw error;
      nothing(`schema '${checkpointer.schema}' has no chat-serve tables (has a server run with this config?)`);
      return;
    }
    const results: PurgedRun[] = [];
    for (const entry of idle) {
      const row = { model: entry.model, runId: entry.runId, key: entry.key, lastActivity: entry.lastActivityAt.toISOString() };
      const lease = await backends.runCoordinator.tryAcquire(entry.key);
      if (lease === null) {
        results.push({ ...row, outcome: "skipped: in use" });
        continue;
      }
      try {
        if (options.dryRun !== true) {
          await saver.deleteThread(entry.key);
          await backends.pendingRuns.remove(entry.key);
        }
        results.push({ ...row, outcome: options.dryRun === true ? "would remove" : "removed" });
      } finally {
        await lease.release();
      }
    }
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
  } finally {
    await backends.close();
  }
}
