import type { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { v7 as uuid7 } from "@langchain/core/utils/uuid";
import { AgentNotFoundError, BackendUnavailableError } from "../../errors/catalogue.js";
import { isServeError } from "../../errors/serve-error.js";
import type { AgentRunRecord, MultitaskStrategy } from "../../store/agent-records.js";
import { withDeadline } from "../../util/deadline.js";
import type { AgentGraph } from "./agent-graph.js";
import type { AgentStreamMode } from "./agent-stream.js";

/** A call to a backend, under the server's deadline. */
export type Backend = <T>(what: string, operation: () => Promise<T>) => Promise<T>;

/**
 * A backend call under the deadline: a failure of the backend (down, stalled, refusing) is
 * `backend_unavailable` (503) naming it; chat-serve's own errors go through as they are.
 */
export async function backendCall<T>(what: string, timeoutMs: number, operation: () => Promise<T>): Promise<T> {
  try {
    return await withDeadline(what, timeoutMs, operation());
  } catch (error) {
    if (isServeError(error)) throw error;
    throw new BackendUnavailableError(`${what.charAt(0).toUpperCase()}${what.slice(1)} could not be reached; retry shortly.`, {
      cause: error,
    });
  }
}

/** A run as a client asks for it (the body of `POST /threads/{id}/runs`, parsed). */
export interface AgentRunRequest {
  assistantId: string;
  /** The model an assistant a client made runs (its `graph_id`); absent: the assistant id names it. */
  graphId?: string;
  input?: unknown;
  command?: { resume?: unknown; update?: unknown; goto?: unknown };
  streamMode: AgentStreamMode[];
  subgraphs: boolean;
  config: { tags?: string[]; metadata?: Record<string, unknown>; recursion_limit?: number; configurable?: Record<string, unknown> };
  context?: unknown;
  metadata: Record<string, unknown>;
  checkpoint?: Record<string, unknown>;
  interruptBefore?: string[] | "*";
  interruptAfter?: string[] | "*";
  multitaskStrategy: MultitaskStrategy;
  ifNotExists: "create" | "reject";
  onCompletion: "delete" | "keep";
  durability?: "sync" | "async" | "exit";
  /** Seconds the run waits before it starts (`after_seconds`); `pending` until then. */
  afterSeconds?: number;
  /** Where the run is POSTed when it ends (`webhook`). */
  webhook?: string;
  /** A run of protocol v2: its events go to its thread's protocol log, as `streamEvents(…, { version: "v3" })` makes them. */
  protocol?: boolean;
}

/** The checkpoint ids LangGraph's savers make: UUIDs (v6). */
const CHECKPOINT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/iu;
/** Names an object has of its own, which a checkpoint namespace can never be. */
const RESERVED_NAMESPACES = new Set(["__proto__", "constructor", "prototype"]);

/**
 * A checkpoint a client names (`checkpoint_id`, `checkpoint_ns`), checked before any saver is
 * asked for it: an id no saver could have made (`__proto__`, `constructor`, any non-UUID) or a
 * namespace that is an object's own name is no checkpoint, a 404, rather than a question the
 * saver refuses with an error of its own (LangGraph's MemorySaver throws on them).
 */
export function assertCheckpointNamed(checkpoint: Record<string, unknown> | null | undefined): void {
  if (checkpoint == null) return;
  const { checkpoint_id: id, checkpoint_ns: namespace } = checkpoint;
  if (id != null && (typeof id !== "string" || !CHECKPOINT_ID.test(id))) throw new AgentNotFoundError("checkpoint", String(id));
  if (
    namespace != null &&
    (typeof namespace !== "string" || namespace.split("|").some((part) => RESERVED_NAMESPACES.has(part.split(":")[0] ?? "")))
  ) {
    throw new AgentNotFoundError("checkpoint", String(namespace));
  }
}

/**
 * The checkpoint thread of a protocol thread: its id for the default scope; for a tenant's,
 * the id behind the tenant's name (and its length, so no two pairs meet): tenants never share one.
 */
export function checkpointThreadId(scope: string, threadId: string): string {
  return scope === "default" ? threadId : `${scope.length}:${scope}:${threadId}`;
}

/** The runnable config of a run: the client's config, the thread's checkpoint, limits, interrupts, callbacks and the signal. */
export function runnableConfigOf(
  request: AgentRunRequest,
  run: {
    runId: string;
    threadId: string;
    checkpointThread: string;
    model: string;
    /** The assistant's own id (a graph's system assistant's uuid when the client named the graph). */
    assistantId: string;
    /** Which start of the run this is (1, or more once taken over). */
    attempt: number;
    callbacks: BaseCallbackHandler[];
    signal: AbortSignal;
  },
): Record<string, unknown> {
  // As LangGraph's server: the run's, graph's and assistant's ids in `configurable` (so in every
  // checkpoint's metadata and every event's), the attempt in the run's metadata.
  const ids = runIds(run);
  return {
    ...(request.config.tags === undefined ? {} : { tags: request.config.tags }),
    metadata: { ...request.config.metadata, ...request.metadata, ...ids, run_attempt: run.attempt },
    ...(request.config.recursion_limit === undefined ? {} : { recursionLimit: request.config.recursion_limit }),
    configurable: { ...request.config.configurable, ...request.checkpoint, ...ids, thread_id: run.checkpointThread },
    ...(request.context === undefined ? {} : { context: request.context }),
    ...(request.interruptBefore === undefined ? {} : { interruptBefore: request.interruptBefore }),
    ...(request.interruptAfter === undefined ? {} : { interruptAfter: request.interruptAfter }),
    ...(request.durability === undefined ? {} : { durability: request.durability }),
    ...(run.callbacks.length === 0 ? {} : { callbacks: run.callbacks }),
    signal: run.signal,
  };
}

/** Deletes a thread's checkpoints, when the checkpointer can. */
export async function deleteCheckpoints(graph: AgentGraph, threadId: string): Promise<void> {
  const saver = graph.checkpointer as { deleteThread?: (id: string) => Promise<void> } | undefined;
  await saver?.deleteThread?.(threadId);
}

/** What a new run's record takes of its thread: its graph, its assistant's own id (on the thread's metadata), that metadata. */
export function resolvedOf(
  model: string,
  thread: { metadata?: Record<string, unknown> | null },
): { model: string; assistantId: string; threadMetadata: Record<string, unknown> } {
  const metadata = thread.metadata ?? {};
  return { model, assistantId: typeof metadata.assistant_id === "string" ? metadata.assistant_id : model, threadMetadata: metadata };
}

/** The ids LangGraph's server puts in a run's `configurable` (so in its checkpoints' metadata too). */
function runIds(run: { runId: string; threadId: string; model: string; assistantId: string }): Record<string, string> {
  return { run_id: run.runId, thread_id: run.threadId, graph_id: run.model, assistant_id: run.assistantId };
}

/**
 * The record of a new run, `pending`, as LangGraph's server records it: the assistant's own id
 * (a graph's system assistant's uuid when the client named the graph), the run's metadata over
 * its thread's, and its `kwargs`. A stateless run's thread goes with it when the client asked so.
 */
export function newRunRecord(
  scope: string,
  threadId: string,
  request: AgentRunRequest,
  temporary: boolean,
  at: string,
  resolved: { model: string; assistantId: string; threadMetadata?: Record<string, unknown> },
): AgentRunRecord {
  const runId = uuid7();
  const metadata = { ...resolved.threadMetadata, ...request.metadata };
  const ids = runIds({ runId, threadId, model: resolved.model, assistantId: resolved.assistantId });
  const kwargs: Record<string, unknown> = {
    input: request.input ?? null,
    command: request.command ?? null,
    config: { ...request.config, configurable: { ...request.config.configurable, ...ids }, metadata },
    context: request.context ?? null,
    stream_mode: request.streamMode,
    interrupt_before: request.interruptBefore ?? null,
    interrupt_after: request.interruptAfter ?? null,
    webhook: request.webhook ?? null,
    subgraphs: request.subgraphs,
    temporary: temporary && request.onCompletion === "delete",
  };
  return {
    run_id: runId,
    thread_id: threadId,
    assistant_id: resolved.assistantId,
    scope,
    created_at: at,
    updated_at: at,
    status: "pending",
    metadata,
    multitask_strategy: request.multitaskStrategy,
    temporary: temporary && request.onCompletion === "delete",
    kwargs,
  };
}
