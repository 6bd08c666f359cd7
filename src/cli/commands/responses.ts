import chalk from "chalk";
import { storeConfigOf } from "../../config/define-config.js";
import { loadConfig } from "../../config/load-config.js";
import { UserError } from "../../errors/developer-errors.js";
import { backendsFromConfig } from "../../server/backends.js";
import { deleteReleasedThreads } from "../../server/store-sweeper.js";
import { olderThanMs } from "../pending-run-stores.js";
import { Table } from "../table.js";

export interface ResponsesPurgeOptions {
  olderThan: string;
  dryRun?: boolean;
  json?: boolean;
  config?: string;
}

// Postgres: relation does not exist.
const UNDEFINED_TABLE = "42P01";

/**
 * `chat-serve responses purge`: deletes stored responses, conversations and chat sessions
 * unused for longer than the duration, with the checkpoints of the threads they leave
 * unreferenced (in the server's checkpointer). Reads the config's store and checkpointer
 * only: it needs no API key and loads no graph.
 */
export async function responsesPurgeCommand(options: ResponsesPurgeOptions): Promise<void> {
  const olderThan = olderThanMs(options.olderThan);
  const loaded = await loadConfig({ configPath: options.config, operator: true });
  const store = storeConfigOf(loaded.config);
  const say = (result: Record<string, number | boolean>, text: string) =>
    process.stdout.write(options.json === true ? `${JSON.stringify(result)}\n` : `${text}\n`);
  if (store.kind === "memory") {
    say(
      { responses: 0, conversations: 0, sessions: 0, threads: 0, dryRun: options.dryRun === true },
      `nothing to purge: ${loaded.displayPath} keeps stored responses in memory, inside the running server (which expires them itself)`,
    );
    return;
  }
  const backends = await backendsFromConfig(loaded.config, { timeoutMs: loaded.config.backendTimeoutMs });
  try {
    const cutoff = new Date(Date.now() - olderThan);
    const result = await backends.store.purgeOlderThan(cutoff, { dryRun: options.dryRun === true });
    const saver = backends.checkpointer as { deleteThread?: (threadId: string) => Promise<void> };
    const threads = await deleteReleasedThreads(
      result.threads,
      async (_model, threadId) => saver.deleteThread?.(threadId),
      loaded.config.backendTimeoutMs,
    );
    const verb = options.dryRun === true ? "would delete" : "deleted";
    say(
      {
        responses: result.responses,
        conversations: result.conversations,
        sessions: result.sessions,
        threads,
        dryRun: options.dryRun === true,
      },
      `${verb} ${result.responses} stored responses, ${result.conversations} conversations and ${result.sessions} chat sessions unused for more than ${options.olderThan}${options.dryRun === true ? "" : ` (and ${threads} threads' checkpoints)`}`,
    );
  } catch (error) {
    if ((error as { code?: string }).code !== UNDEFINED_TABLE) throw error;
    throw new UserError(`schema '${store.schema}' has no chat-serve store tables yet: start the server once with this config`);
  } finally {
    await backends.close();
  }
}

export interface ResponsesListOptions {
  status?: string;
  limit?: string;
  json?: boolean;
  config?: string;
}

const STATUSES = ["queued", "in_progress", "completed", "incomplete", "failed", "cancelled"];

/**
 * `chat-serve responses list`: the stored responses of every tenant, newest first, for
 * operators (`--status in_progress` shows the background runs going on). Reads only; needs
 * no API key and loads no graph.
 */
export async function responsesListCommand(options: ResponsesListOptions): Promise<void> {
  if (options.status !== undefined && !STATUSES.includes(options.status)) {
    throw new UserError(`--status must be one of ${STATUSES.join(", ")} (got '${options.status}')`);
  }
  const limit = options.limit === undefined ? 50 : Number(options.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000)
    throw new UserError(`--limit must be a whole number from 1 to 10000 (got '${options.limit}')`);
  const loaded = await loadConfig({ configPath: options.config, operator: true });
  const store = storeConfigOf(loaded.config);
  if (store.kind === "memory") {
    process.stdout.write(
      options.json === true
        ? "[]\n"
        : `nothing to list: ${loaded.displayPath} keeps stored responses in memory, inside the running server\n`,
    );
    return;
  }
  const backends = await backendsFromConfig(loaded.config, { timeoutMs: loaded.config.backendTimeoutMs });
  try {
    const rows = await backends.store.listResponses({ limit, ...(options.status === undefined ? {} : { status: options.status }) });
    if (options.json === true) {
      process.stdout.write(
        `${JSON.stringify(
          rows.map((row) => ({ ...row, createdAt: row.createdAt.toISOString() })),
          null,
          2,
        )}\n`,
      );
      return;
    }
    if (rows.length === 0) {
      process.stdout.write(`no stored responses${options.status === undefined ? "" : ` with status ${options.status}`}\n`);
      return;
    }
    const table = new Table({
      head: ["id", "model", "tenant scope", "status", "background", "created"].map((title) => chalk.bold(title)),
      style: { head: [], border: [] },
    });
    for (const row of rows)
      table.push([row.id, row.model, row.scope, row.status, row.background ? "yes" : "no", row.createdAt.toISOString()]);
    process.stdout.write(`${table.toString()}\n`);
  } catch (error) {
    if ((error as { code?: string }).code !== UNDEFINED_TABLE) throw error;
    throw new UserError(`schema '${store.schema}' has no chat-serve store tables yet: start the server once with this config`);
  } finally {
    await backends.close();
  }
}
