import type { BaseMessage } from "@langchain/core/messages";
import type { AgentGraph } from "./agent-graph.js";
import { debugEvent, debugTask } from "./debug-payload.js";

/** The stream modes a client may ask for, as the LangGraph Agent Protocol names them. */
export const AGENT_STREAM_MODES = [
  "values",
  "updates",
  "messages",
  "messages-tuple",
  "custom",
  "events",
  "debug",
  "tasks",
  "checkpoints",
  "tools",
] as const;
export type AgentStreamMode = (typeof AGENT_STREAM_MODES)[number];

/** One event of a run's stream: its SSE `event` name and its data. */
export interface AgentStreamEvent {
  event: string;
  data: unknown;
}

export interface AgentStreamOptions {
  graph: AgentGraph;
  input: unknown;
  /** The runnable config the graph runs with (configurable, callbacks, signal, limits…). */
  config: Record<string, unknown>;
  modes: readonly AgentStreamMode[];
  subgraphs: boolean;
  runId: string;
}

/** LangGraph's own stream modes behind the protocol's: `messages-tuple` is its `messages`; the legacy `messages` also needs `values`. */
function libraryModes(modes: readonly AgentStreamMode[]): string[] {
  const library = new Set<string>();
  for (const mode of modes) {
    if (mode === "events") continue;
    if (mode === "messages-tuple") library.add("messages");
    else if (mode === "messages") {
      library.add("messages");
      library.add("values");
    } else library.add(mode);
  }
  // A run always reads the state it ends in: `values` is streamed even when only `events` is asked.
  if (library.size === 0) library.add("values");
  return [...library];
}

/**
 * The legacy `messages` mode: a message's metadata the first time it is heard, then the
 * whole message so far with every token (`messages/partial`), and each message once complete
 * (`messages/complete`, from the state).
 */
class LegacyMessages {
  readonly #partial = new Map<string, BaseMessage>();
  readonly #complete = new Set<string>();

  *token(message: BaseMessage, metadata: unknown): Generator<AgentStreamEvent> {
    const id = message.id;
    if (id === undefined) return;
    const known = this.#partial.get(id);
    if (known === undefined) {
      this.#partial.set(id, message);
      yield { event: "messages/metadata", data: { [id]: { metadata } } };
    } else {
      this.#partial.set(id, (known as BaseMessage & { concat(other: BaseMessage): BaseMessage }).concat(message));
    }
    yield { event: "messages/partial", data: [this.#partial.get(id)] };
  }

  *values(state: unknown): Generator<AgentStreamEvent> {
    const messages = (state as { messages?: unknown } | null)?.messages;
    if (!Array.isArray(messages)) return;
    const fresh = messages.filter((message: BaseMessage) => typeof message?.id === "string" && !this.#complete.has(message.id));
    for (const message of fresh) this.#complete.add(message.id as string);
    if (fresh.length > 0) yield { event: "messages/complete", data: fresh };
  }
}

/** The event name of a part: the mode, and the subgraph's namespace after `|` when it comes from one. */
function eventName(mode: string, namespace: readonly string[]): string {
  return namespace.length > 0 ? `${mode}|${namespace.join("|")}` : mode;
}

/**
 * Converts the graph's parts into protocol events. `values` chunks of the root graph are
 * also handed to `onValues`, so the run knows the state it ends in.
 */
function* partEvents(
  modes: ReadonlySet<string>,
  legacy: LegacyMessages | undefined,
  namespace: string[],
  mode: string,
  data: unknown,
): Generator<AgentStreamEvent> {
  if (mode === "messages") {
    const [message, metadata] = data as [BaseMessage, unknown];
    if (modes.has("messages-tuple")) yield { event: eventName("messages", namespace), data };
    if (legacy !== undefined && namespace.length === 0) yield* legacy.token(message, metadata);
    return;
  }
  if (mode === "values" && legacy !== undefined && namespace.length === 0) yield* legacy.values(data);
  if (!modes.has(mode)) return;
  // As LangGraph's server writes them: checkpoints named in snake case, tasks by their checkpoint.
  const shown = mode === "debug" ? debugEvent(data) : mode === "tasks" ? debugTask(data) : data;
  yield { event: eventName(mode, namespace), data: shown };
}

/**
 * Runs the graph and yields the protocol's events for the modes asked, in graph order:
 * `values`, `updates`, `custom`, `debug`, `tasks`, `checkpoints` as LangGraph streams them;
 * `messages-tuple` as `messages` events of `[message chunk, metadata]`; the legacy
 * `messages` as `messages/metadata`, `messages/partial` and `messages/complete`; `events`
 * as LangChain's stream events (v2). With `subgraphs`, parts of subgraphs too, their event
 * names carrying the namespace (`values|node:task`).
 */
export async function* agentStreamEvents(options: AgentStreamOptions): AsyncGenerator<AgentStreamEvent> {
  const modes = new Set<string>(options.modes);
  const legacy = modes.has("messages") ? new LegacyMessages() : undefined;
  const streamMode = libraryModes(options.modes);
  const config = { ...options.config, streamMode, subgraphs: true, runId: options.runId };
  if (!modes.has("events")) {
    const stream = await options.graph.stream(options.input, config);
    for await (const part of stream) {
      const [namespace, mode, data] = part as [string[], string, unknown];
      if (namespace.length > 0 && !options.subgraphs) continue;
      yield* partEvents(modes, legacy, namespace, mode, data);
    }
    return;
  }
  // `events` needs LangChain's event stream; the graph's own parts arrive in it as the root run's `on_chain_stream`.
  for await (const event of await options.graph.streamEvents(options.input, { ...config, version: "v2" })) {
    const {
      event: kind,
      run_id: runId,
      data,
      tags,
    } = event as { event: string; run_id: string; data: { chunk?: unknown }; tags?: string[] };
    if (tags?.includes("langsmith:hidden")) continue;
    if (kind === "on_chain_stream" && runId === options.runId) {
      const [namespace, mode, chunk] = data.chunk as [string[], string, unknown];
      if (namespace.length > 0 && !options.subgraphs) continue;
      yield* partEvents(modes, legacy, namespace, mode, chunk);
    } else {
      yield { event: "events", data: event };
    }
  }
}
