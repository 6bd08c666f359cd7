import chalk from "chalk";
import Table from "cli-table3";
import { loadConfig } from "../../config/load-config.js";
import { deleteIdleRuns, type IdleRunOutcome, type IdleRunResult } from "../../coordination/expire-pending.js";
import { UserError } from "../../errors/catalogue.js";
import { backendsFromConfig } from "../../server/backends.js";
import { parseDuration } from "../../util/duration.js";

export interface PurgeOptions {
  olderThan: string;
  dryRun?: boolean;
  json?: boolean;
  config?: string;
}

/** `--older-than` in milliseconds. */
export function olderThanMs(text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined) throw new UserError(`--older-than must be a duration like 90m, 12h or 7d (got '${text}')`);
  return ms;
}

type Outcome = IdleRunOutcome;

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
  const idleMs = olderThanMs(options.olderThan);
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
    let outcomes: IdleRunResult[];
    try {
      outcomes = await deleteIdleRuns(
        { pendingRuns: backends.pendingRuns, coordinator: backends.runCoordinator, checkpointer: backends.checkpointer },
        new Date(Date.now() - idleMs),
        { mode: "purge", dryRun: options.dryRun === true },
      );
    } catch (error) {
      if ((error as { code?: string }).code !== UNDEFINED_TABLE) throw error;
      nothing(`schema '${checkpointer.schema}' has no chat-serve tables (has a server run with this config?)`);
      return;
    }
    const results: PurgedRun[] = outcomes.map(({ entry, outcome }) => ({
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
  } finally {
    await backends.close();
  }
}
