import type { RunnableConfig } from "@langchain/core/runnables";
import { InternalError, UserFacingError } from "../../errors/catalogue.js";
import { toServeError } from "../../errors/to-serve-error.js";
import { EventLoopTurns } from "../../util/event-loop-turns.js";

/** A LangGraph state snapshot, as `getState` and `getStateHistory` give it. */
export interface StateSnapshot {
  values: unknown;
  next: string[];
  config: RunnableConfig;
  metadata?: Record<string, unknown>;
  createdAt?: string;
  parentConfig?: RunnableConfig;
  tasks: {
    id: string;
    name: string;
    path?: unknown[];
    error?: unknown;
    interrupts: unknown[];
    state?: unknown;
    result?: unknown;
  }[];
}

/** What the Agent Protocol needs of a compiled graph running on a checkpointer. */
export interface AgentGraph {
  stream(input: unknown, config?: Record<string, unknown>): Promise<AsyncIterable<unknown>>;
  streamEvents(input: unknown, config: Record<string, unknown>): AsyncIterable<unknown> | Promise<AsyncIterable<unknown>>;
  getState(config: RunnableConfig, options?: { subgraphs?: boolean }): Promise<StateSnapshot>;
  getStateHistory(
    config: RunnableConfig,
    options?: { limit?: number; before?: RunnableConfig; filter?: Record<string, unknown> },
  ): AsyncIterable<StateSnapshot>;
  updateState(config: RunnableConfig, values: unknown, asNode?: string): Promise<RunnableConfig>;
  getGraphAsync(config?: RunnableConfig & { xray?: boolean | number }): Promise<{ toJSON(): unknown }>;
  getSubgraphsAsync(namespace?: string, recurse?: boolean): AsyncIterable<[string, unknown]>;
  checkpointer?: unknown;
  builder?: unknown;
  nodes: Record<string, unknown>;
  channels: Record<string, unknown>;
}

/** The checkpoint a config points at, as the protocol names it. */
export interface ProtocolCheckpoint {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string | null;
  checkpoint_map: Record<string, unknown> | null;
}

/** A config's checkpoint, or null when it names none; `threadId`: the thread as the client knows it. */
function checkpointOf(config: RunnableConfig | undefined, threadId?: string): ProtocolCheckpoint | null {
  const configurable = config?.configurable as Record<string, unknown> | undefined;
  if (configurable?.thread_id === undefined) return null;
  return {
    thread_id: threadId ?? String(configurable.thread_id),
    checkpoint_ns: typeof configurable.checkpoint_ns === "string" ? configurable.checkpoint_ns : "",
    checkpoint_id: typeof configurable.checkpoint_id === "string" ? configurable.checkpoint_id : null,
    checkpoint_map: (configurable.checkpoint_map as Record<string, unknown> | undefined) ?? null,
  };
}

/**
 * A task's error as a client may read it: a graph's UserFacingError as it was, anything else
 * the generic sentence every surface gives (the run's log has the text). An error read back
 * from a checkpoint is a plain `{ name, message }`, so there its class is told by its name.
 */
function errorText(error: unknown): string | null {
  if (error == null) return null;
  if (error instanceof Error) return toServeError(error).message;
  const { name, message } = error as { name?: unknown; message?: unknown };
  if (name === UserFacingError.name && typeof message === "string") return message;
  return new InternalError().message;
}

/**
 * The protocol's `ThreadState` of a snapshot: values, next nodes, tasks with their interrupts,
 * and where it is (`threadId`: the thread as the client knows it).
 */
export function threadStateOf(snapshot: StateSnapshot, threadId?: string): Record<string, unknown> {
  return {
    values: snapshot.values ?? {},
    next: snapshot.next ?? [],
    tasks: (snapshot.tasks ?? []).map((task) => {
      const state = task.state as StateSnapshot | RunnableConfig | undefined;
      const nested = state !== undefined && "values" in state && "next" in state;
      return {
        id: task.id,
        name: task.name,
        error: errorText(task.error),
        interrupts: task.interrupts ?? [],
        path: task.path ?? [],
        checkpoint: !nested && state !== undefined ? (state.configurable ?? null) : null,
        state: nested ? threadStateOf(state as StateSnapshot, threadId) : null,
        result: task.result ?? null,
      };
    }),
    metadata: snapshot.metadata ?? {},
    created_at: snapshot.createdAt ?? null,
    checkpoint: checkpointOf(snapshot.config, threadId),
    parent_checkpoint: checkpointOf(snapshot.parentConfig, threadId),
  };
}

/** The interrupts a snapshot waits on, by task id (a thread's `interrupts`). */
export function interruptsOf(snapshot: StateSnapshot | undefined): Record<string, unknown[]> {
  const interrupts: Record<string, unknown[]> = {};
  for (const task of snapshot?.tasks ?? []) if ((task.interrupts ?? []).length > 0) interrupts[task.id] = task.interrupts;
  return interrupts;
}

/**
 * JSON of protocol data as LangGraph's server writes it: a LangChain message as its dict
 * (`{ type, content, id, tool_calls, … }`), callbacks and functions left out.
 */
export function protocolJson(value: unknown): string {
  return JSON.stringify(value, function (this: Record<string, unknown>, key: string, current: unknown) {
    const raw = this[key];
    if (key === "callbacks" || typeof raw === "function") return undefined;
    if (raw !== null && typeof raw === "object") {
      if (typeof (raw as { toDict?: unknown }).toDict === "function" && typeof (raw as { _getType?: unknown })._getType === "function") {
        const { type, data } = (raw as { toDict(): { type: string; data: Record<string, unknown> } }).toDict();
        return { ...data, type };
      }
    }
    return current;
  });
}

/** An object JSON.stringify walks as it is: an object or array of the plain kind, without `toJSON`. */
function walkable(value: object): boolean {
  const prototype = Object.getPrototypeOf(value);
  const plain = Array.isArray(value) ? prototype === Array.prototype : prototype === Object.prototype || prototype === null;
  return plain && typeof (value as { toJSON?: unknown }).toJSON !== "function";
}

/** What JSON leaves out of an object (and writes as null in a list). */
const omitted = (value: unknown) => value === undefined || typeof value === "function" || typeof value === "symbol";

/**
 * `protocolJson`, in turns of the event loop: the same text, but a large value (a state of
 * 10,000 messages: 100 ms of serializing) is written a piece at a time, the loop taking a turn
 * whenever the writing has worked past its budget. Plain objects and lists are walked here; every
 * other value (a message, a date) is written whole by `protocolJson`.
 */
export async function protocolJsonInTurns(value: unknown, turns = new EventLoopTurns()): Promise<string | undefined> {
  const write = async (current: unknown, ancestors: Set<object>): Promise<string | undefined> => {
    const turn = turns.take();
    if (turn !== undefined) await turn;
    if (current === null || typeof current !== "object" || !walkable(current) || ancestors.has(current)) return protocolJson(current);
    ancestors.add(current);
    try {
      if (Array.isArray(current)) {
        const items: string[] = [];
        for (const item of current) items.push(omitted(item) ? "null" : ((await write(item, ancestors)) ?? "null"));
        return `[${items.join(",")}]`;
      }
      const fields: string[] = [];
      for (const [key, item] of Object.entries(current)) {
        if (key === "callbacks" || omitted(item)) continue;
        const json = await write(item, ancestors);
        if (json !== undefined) fields.push(`${JSON.stringify(key)}:${json}`);
      }
      return `{${fields.join(",")}}`;
    } finally {
      ancestors.delete(current);
    }
  };
  return write(value, new Set());
}
