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

/**
 * `chat-serve purge-pending`: deletes pending interrupt checkpoints (and their index rows)
 * idle for longer than the duration. Each run's lease is taken first, so a run being resumed
 * right now is skipped.
 */
export async function purgePendingCommand(options: PurgeOptions): Promise<void> {
  const idleMs = parseDuration(options.olderThan);
  const loaded = await loadConfig({ configPath: options.config });
  if (loaded.config.checkpointer.kind === "memory") {
    throw new UserError(
      `${loaded.displayPath} uses the memory checkpointer: pending runs live only inside the running server and end with it; nothing to purge`,
    );
  }
  const backends = await backendsFromConfig(loaded.config, { timeoutMs: loaded.config.backendTimeoutMs });
  try {
    await backends.setup();
    const saver = backends.checkpointer as { deleteThread(threadId: string): Promise<void> };
    const idle = await backends.pendingRuns.listIdleSince(new Date(Date.now() - idleMs));
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
