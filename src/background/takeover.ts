import { BackgroundRunLostError } from "../errors/catalogue.js";
import type { GraphConfig } from "../registry/graph-config.js";

/** After this many starts, a run whose workers keep stopping ends failed. */
export const MAX_ATTEMPTS = 5;

/** The thread a durable background run of a graph with no conversation checkpoints on. */
export function backgroundThreadId(responseId: string): string {
  return `chat-serve.background.${responseId}`;
}

/** How a worker starts a background run. */
export type RunStart =
  /** Run it: durably when `durable` is set (going on from its last step when `resume`). */
  | { kind: "run"; durable?: { threadId: string; resume: boolean } }
  /** End it failed: it cannot go on. */
  | { kind: "fail"; error: BackgroundRunLostError };

/**
 * Decides how attempt `attempt` of a run starts. With a durable checkpointer, every run
 * checkpoints each step (a graph with no thread of its own on `threadId`; an interrupt run on
 * its run's thread), and a later attempt goes on from the last step completed (the step in flight when the worker stopped runs again). Without one, a later
 * attempt starts from the beginning only for a graph registered with `background.retry`;
 * otherwise the run ends failed, saying why.
 */
export function planStart(config: GraphConfig, responseId: string, attempt: number, resumable: boolean): RunStart {
  const durable = resumable;
  const threadId = backgroundThreadId(responseId);
  if (attempt <= 1) return durable ? { kind: "run", durable: { threadId, resume: false } } : { kind: "run" };
  if (attempt > MAX_ATTEMPTS) {
    return fail(`The workers running this background response stopped ${attempt - 1} times before it finished; create it again.`);
  }
  if (durable) return { kind: "run", durable: { threadId, resume: true } };
  if (config.background.retry) return { kind: "run" };
  return fail(
    "The worker running this background response stopped before it finished, and without a durable checkpointer it cannot go on from its last step; create it again (a graph registered with background: { retry: true } starts such runs again from the beginning).",
  );
}

function fail(message: string): RunStart {
  return { kind: "fail", error: new BackgroundRunLostError(message) };
}
