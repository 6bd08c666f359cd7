import { loadConfig } from "../config/load-config.js";
import { UserError } from "../errors/developer-errors.js";
import { type Backends, backendsFromConfig } from "../server/backends.js";
import { parseDuration } from "../util/duration.js";

// Postgres: relation does not exist; column does not exist.
const UNDEFINED_TABLE = "42P01";
const UNDEFINED_COLUMN = "42703";

/** `--older-than` in milliseconds. */
export function olderThanMs(text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined) throw new UserError(`--older-than must be a duration like 90m, 12h or 7d (got '${text}')`);
  return ms;
}

/**
 * Runs `work` on the durable pending-run stores a config names, then closes them. When there
 * is nothing to read (the memory checkpointer, whose runs live inside the server, or a schema
 * no server has set up) it says so with `nothing` and succeeds: a scheduled job must not fail
 * for it. Never creates anything.
 */
export async function withPendingRunStores(
  options: { config?: string },
  nothing: (reason: string) => void,
  work: (backends: Backends) => Promise<void>,
): Promise<void> {
  const loaded = await loadConfig({ configPath: options.config, operator: true });
  const { checkpointer } = loaded.config;
  if (checkpointer.kind === "memory") {
    nothing(`${loaded.displayPath} uses the memory checkpointer, whose pending runs live and end inside the running server`);
    return;
  }
  const backends = await backendsFromConfig(loaded.config, { timeoutMs: loaded.config.backendTimeoutMs });
  try {
    await work(backends);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === UNDEFINED_COLUMN) {
      throw new UserError(
        `the chat-serve tables in schema '${checkpointer.schema}' are from an earlier version; start the server once (it upgrades them), then run this again`,
      );
    }
    if (code !== UNDEFINED_TABLE) throw error;
    nothing(`schema '${checkpointer.schema}' has no chat-serve tables (has a server run with this config?)`);
  } finally {
    await backends.close();
  }
}
