import chalk from "chalk";
import type { LoadedConfig } from "../config/load-config.js";
import { ConfigError, RegistrationError, UserError } from "../errors/developer-errors.js";
import { isChatServeError } from "../errors/serve-error.js";

function isExpected(error: unknown): error is Error {
  return isChatServeError(error, ConfigError) || isChatServeError(error, RegistrationError) || isChatServeError(error, UserError);
}

/**
 * Prints an error the way the CLI promises: one line for user mistakes, a stack for bugs.
 * With `stack` (`LOG_LEVEL` or `--log-level` at debug or trace), a user mistake's cause
 * follows its line with its stack: where an import failed, for instance.
 */
export function reportError(error: unknown, options: { stack?: boolean } = {}): void {
  if (isExpected(error)) {
    process.stderr.write(`${chalk.red("error")} ${error.message}\n`);
    const cause = (error as { cause?: unknown }).cause;
    if (options.stack === true && cause instanceof Error && cause.stack !== undefined) {
      process.stderr.write(`${chalk.dim(`caused by ${cause.stack}`)}\n`);
    }
    return;
  }
  process.stderr.write(`${chalk.red("chat-serve crashed; this is a bug, please report it:")}\n`);
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
}

/** A backend URL fit to print: any password replaced. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = "***";
    return parsed.href;
  } catch {
    return url;
  }
}

/**
 * What was read from a LangGraph project's `langgraph.json` and what was not, in one line,
 * with the way to more settings; undefined for a chat-serve config.
 */
export function langGraphNote(loaded: LoadedConfig): string | undefined {
  if (loaded.langgraphJson === undefined) return undefined;
  const { project } = loaded.langgraphJson;
  const count = Object.keys(project.graphs).length;
  const parts = [`${count} graph${count === 1 ? "" : "s"}`];
  if (project.env !== undefined) {
    const variables = Object.keys(project.env.variables).length;
    parts.push(`env from ${project.env.from} (${variables} variable${variables === 1 ? "" : "s"}; those already set keep their value)`);
  }
  if (project.auth !== undefined) {
    parts.push(`auth from ${project.auth.path}${project.auth.disableStudioAuth ? " (Studio through it too)" : ""}`);
  }
  if (project.checkpointerTtl !== undefined) {
    const { default_ttl: minutes, sweep_interval_minutes: every } = project.checkpointerTtl;
    parts.push(
      `a thread TTL (${minutes === undefined ? "each thread's own" : `${minutes} idle minutes`}, swept every ${every ?? 5} minutes)`,
    );
  }
  if (project.storeIndex !== undefined) parts.push(`a semantic store (${project.storeIndex.embed}, ${project.storeIndex.dims} dimensions)`);
  if (project.storeTtl !== undefined) {
    const minutes = project.storeTtl.defaultTtl;
    parts.push(`a store TTL (${minutes === undefined ? "each item's own" : `${minutes} minutes`})`);
  }
  const http = project.http;
  if (project.ui !== undefined && !http?.disabled.includes("disable_ui")) {
    const graphs = Object.keys(project.ui);
    parts.push(`the generative UI of ${graphs.join(", ")} (at /ui/{graph})`);
  }
  if (http?.app !== undefined) parts.push(`routes from ${http.app}${http.enableCustomRouteAuth ? " (behind the auth)" : ""}`);
  if (http?.mountPrefix !== undefined) parts.push(`everything of LangGraph's under ${http.mountPrefix}`);
  if (http !== undefined && http.disabled.length > 0)
    parts.push(`${http.disabled.map((key) => key.slice("disable_".length)).join(", ")} off`);
  const ignored = project.ignoredKeys.length === 0 ? "" : `; ignored: ${project.ignoredKeys.join(", ")}`;
  return `${chalk.cyan("langgraph")} read ${parts.join(", ")} from ${loaded.displayPath}${ignored}. For API keys, limits, a Postgres checkpointer and the rest, write a chat-serve.config.ts: ${chalk.cyan("chat-serve init --from langgraph.json")}`;
}
