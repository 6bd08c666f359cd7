import type { RunnableConfig } from "@langchain/core/runnables";
import { v7 as uuid7 } from "@langchain/core/utils/uuid";
import { BaseLangGraphError } from "@langchain/langgraph";
import { AgentConflictError, AgentInvalidBodyError, AgentNotFoundError } from "../../errors/catalogue.js";
import type { GraphRegistry } from "../../registry/graph-registry.js";
import type { AgentRecords, AgentThreadRecord } from "../../store/agent-records.js";
import { withDeadline } from "../../util/deadline.js";
import { type AgentGraph, interruptsOf, type StateSnapshot, threadStateOf } from "./agent-graph.js";
import { assertCheckpointNamed, checkpointThreadId, deleteCheckpoints } from "./agent-run-config.js";
import type { AgentRuns } from "./agent-runs.js";
import { assertReadableMessages } from "./input-messages.js";
import { keepLatestCheckpoints } from "./keep-latest.js";

/** What `as_node` may name besides the graph's nodes: LangGraph's own markers for an update. */
const UPDATE_AS = new Set(["__end__", "__copy__", "__input__", "__start__"]);

/** What a search asks of threads (the body of `POST /threads/search`, parsed). */
export interface ThreadFilter {
  ids?: readonly string[] | null | undefined;
  metadata?: Record<string, unknown> | null | undefined;
  values?: Record<string, unknown> | null | undefined;
  status?: AgentThreadRecord["status"] | null | undefined;
}

/** True when `value` holds every key of `filter` with an equal value (JSON equality). */
function contains(value: unknown, filter: Record<string, unknown>): boolean {
  if (typeof value !== "object" || value === null) return false;
  return Object.entries(filter).every(
    ([key, wanted]) => JSON.stringify((value as Record<string, unknown>)[key]) === JSON.stringify(wanted),
  );
}

interface Saver {
  list(config: RunnableConfig): AsyncIterable<{
    config: RunnableConfig;
    checkpoint: { channel_versions: Record<string, unknown> };
    metadata?: unknown;
    parentConfig?: RunnableConfig;
    pendingWrites?: [string, string, unknown][];
  }>;
  put(config: RunnableConfig, checkpoint: unknown, metadata: unknown, newVersions: Record<string, unknown>): Promise<RunnableConfig>;
  putWrites(config: RunnableConfig, writes: [string, unknown][], taskId: string): Promise<void>;
}

/**
 * The threads of the Agent Protocol: their records (owner, metadata, status) and their state,
 * read from and written to the checkpointer of the graph that runs on them.
 */
/** A thread's own time to live, as the protocol sends it: minutes, and what happens then. */
export interface ThreadTtlBody {
  ttl: number;
  strategy?: "delete" | "keep_latest" | null;
}

/** A thread record's own time to live fields. */
function ownTtl(ttl: ThreadTtlBody | null | undefined): Pick<AgentThreadRecord, "ttl_minutes" | "ttl_strategy"> {
  if (ttl == null) return {};
  return { ttl_minutes: ttl.ttl, ...(ttl.strategy == null ? {} : { ttl_strategy: ttl.strategy }) };
}

export class AgentThreads {
  constructor(
    private readonly registry: GraphRegistry,
    private readonly records: AgentRecords,
    private readonly runs: AgentRuns,
    private readonly backendTimeoutMs: number,
  ) {}

  #backend<T>(what: string, operation: () => Promise<T>): Promise<T> {
    return withDeadline(what, this.backendTimeoutMs, operation());
  }

  /** A thread of this scope, if there is one. */
  find(scope: string, threadId: string): Promise<AgentThreadRecord | undefined> {
    return this.#backend("the thread records", () => this.records.getThread(scope, threadId));
  }

  /** A thread of this scope, or 404. */
  async record(scope: string, threadId: string): Promise<AgentThreadRecord> {
    const record = await this.find(scope, threadId);
    if (record === undefined) throw new AgentNotFoundError("thread", threadId);
    return record;
  }

  /** The graph a thread's state lives with: the one that last ran on it (or was named at its creation). */
  async graphOf(record: AgentThreadRecord): Promise<AgentGraph | undefined> {
    if (record.graph_id === undefined || !this.registry.getGraphNames().includes(record.graph_id)) return undefined;
    return (await this.runs.graphOf(record.graph_id)).graph;
  }

  /** The thread's state (at a checkpoint when one is given); undefined while no graph is known for it. */
  async snapshot(record: AgentThreadRecord, checkpoint?: Record<string, unknown>, subgraphs = false): Promise<StateSnapshot | undefined> {
    const graph = await this.graphOf(record);
    if (graph === undefined) return undefined;
    assertCheckpointNamed(checkpoint);
    const config = { configurable: { ...checkpoint, thread_id: checkpointThreadId(record.scope, record.thread_id) } };
    return this.#backend("the checkpointer", () => graph.getState(config, { subgraphs }));
  }

  /** The protocol's `Thread`: the record with the state's values and interrupts. */
  async json(record: AgentThreadRecord): Promise<Record<string, unknown>> {
    const snapshot = await this.snapshot(record);
    return {
      thread_id: record.thread_id,
      created_at: record.created_at,
      updated_at: record.updated_at,
      state_updated_at: record.state_updated_at,
      metadata: record.metadata,
      status: record.status,
      values: snapshot?.values ?? {},
      interrupts: interruptsOf(snapshot),
      config: {},
      error: record.error ?? null,
    };
  }

  async create(
    scope: string,
    body: {
      thread_id?: string | null;
      metadata?: Record<string, unknown> | null;
      if_exists?: string | null;
      graph_id?: string | null;
      ttl?: ThreadTtlBody | null;
    },
  ): Promise<AgentThreadRecord> {
    const threadId = body.thread_id ?? uuid7();
    const existing = await this.#backend("the thread records", () => this.records.getThread(scope, threadId));
    if (existing !== undefined) {
      if (body.if_exists === "do_nothing") return existing;
      throw new AgentConflictError(`Thread ${threadId} already exists.`);
    }
    const graphId = body.graph_id ?? (typeof body.metadata?.graph_id === "string" ? body.metadata.graph_id : undefined);
    const at = new Date().toISOString();
    const record: AgentThreadRecord = {
      thread_id: threadId,
      scope,
      ...(graphId !== undefined && this.registry.getGraphNames().includes(graphId) ? { graph_id: graphId } : {}),
      created_at: at,
      updated_at: at,
      state_updated_at: at,
      metadata: { ...body.metadata, ...(graphId === undefined ? {} : { graph_id: graphId }) },
      status: "idle",
      ...ownTtl(body.ttl),
    };
    await this.#backend("the thread records", () => this.records.putThread(record));
    return record;
  }

  async patch(scope: string, threadId: string, metadata: Record<string, unknown>, ttl?: ThreadTtlBody | null): Promise<AgentThreadRecord> {
    const record = await this.record(scope, threadId);
    const patched = {
      ...record,
      metadata: { ...record.metadata, ...metadata },
      updated_at: new Date().toISOString(),
      ...ownTtl(ttl),
    };
    await this.#backend("the thread records", () => this.records.putThread(patched));
    return patched;
  }

  async delete(scope: string, threadId: string): Promise<void> {
    const record = await this.record(scope, threadId);
    if (record.status === "busy")
      throw new AgentConflictError(`Thread ${threadId} is running a run; cancel it before deleting the thread.`);
    const graph = await this.graphOf(record);
    await this.#backend("the thread records", () => this.records.deleteThread(scope, threadId));
    if (graph !== undefined) await this.#backend("the checkpointer", () => deleteCheckpoints(graph, checkpointThreadId(scope, threadId)));
  }

  /**
   * A thread past its time to live under `keep_latest`: its checkpoints cut to the latest of
   * each namespace (its state and pending interrupts stay; its history goes), and the thread
   * marked so that it is not swept again until it changes. False when its checkpointer cannot.
   */
  async keepLatest(scope: string, threadId: string): Promise<boolean> {
    const record = await this.record(scope, threadId);
    if (record.status === "busy") throw new AgentConflictError(`Thread ${threadId} is running a run.`);
    const graph = await this.graphOf(record);
    const cut =
      graph === undefined ||
      (await this.#backend("the checkpointer", () => keepLatestCheckpoints(graph.checkpointer, checkpointThreadId(scope, threadId))));
    if (cut) await this.#backend("the thread records", () => this.records.putThread({ ...record, pruned_at: record.updated_at }));
    return cut;
  }

  /** Threads of a scope that match the filter (values read from each thread's state when asked for). */
  async search(scope: string, filter: ThreadFilter): Promise<AgentThreadRecord[]> {
    const all = await this.#backend("the thread records", () => this.records.listThreads(scope));
    const matching: AgentThreadRecord[] = [];
    for (const record of all) {
      if (filter.ids != null && !filter.ids.includes(record.thread_id)) continue;
      if (filter.status != null && record.status !== filter.status) continue;
      if (filter.metadata != null && !contains(record.metadata, filter.metadata)) continue;
      if (filter.values != null && !contains((await this.snapshot(record))?.values, filter.values)) continue;
      matching.push(record);
    }
    return matching;
  }

  /** A new thread with the same metadata and a copy of every checkpoint. */
  async copy(scope: string, threadId: string): Promise<AgentThreadRecord> {
    const source = await this.record(scope, threadId);
    const copy = await this.create(scope, { metadata: source.metadata, graph_id: source.graph_id ?? null });
    const graph = await this.graphOf(source);
    const saver = graph?.checkpointer as Saver | undefined;
    if (saver !== undefined && typeof saver.list === "function") {
      const from = checkpointThreadId(scope, threadId);
      const to = checkpointThreadId(scope, copy.thread_id);
      const tuples = [];
      for await (const tuple of saver.list({ configurable: { thread_id: from } })) tuples.push(tuple);
      // Oldest first, so each checkpoint's parent is there before it.
      for (const tuple of tuples.reverse()) {
        const { checkpoint_ns = "", checkpoint_id } = (tuple.config.configurable ?? {}) as {
          checkpoint_ns?: string;
          checkpoint_id?: string;
        };
        const parentId = (tuple.parentConfig?.configurable as { checkpoint_id?: string } | undefined)?.checkpoint_id;
        const target = { configurable: { thread_id: to, checkpoint_ns, ...(parentId === undefined ? {} : { checkpoint_id: parentId }) } };
        await this.#backend("the checkpointer", () =>
          saver.put(target, tuple.checkpoint, tuple.metadata, tuple.checkpoint.channel_versions),
        );
        const written = { configurable: { thread_id: to, checkpoint_ns, checkpoint_id } };
        const byTask = new Map<string, [string, unknown][]>();
        for (const [taskId, channel, value] of tuple.pendingWrites ?? [])
          byTask.set(taskId, [...(byTask.get(taskId) ?? []), [channel, value]]);
        for (const [taskId, writes] of byTask) await this.#backend("the checkpointer", () => saver.putWrites(written, writes, taskId));
      }
    }
    const copied = { ...copy, status: source.status === "busy" ? "idle" : source.status };
    await this.#backend("the thread records", () => this.records.putThread(copied));
    return copied;
  }

  /** The thread's state (at a checkpoint when one is given). */
  async state(scope: string, threadId: string, checkpoint?: Record<string, unknown>, subgraphs = false): Promise<Record<string, unknown>> {
    const record = await this.record(scope, threadId);
    const snapshot = await this.snapshot(record, checkpoint, subgraphs);
    if (snapshot === undefined) return emptyState(threadId);
    // A checkpoint that does not exist reads as an empty state with no time of its own.
    if (checkpoint?.checkpoint_id !== undefined && snapshot.createdAt === undefined) {
      throw new AgentNotFoundError("checkpoint", String(checkpoint.checkpoint_id));
    }
    return threadStateOf(snapshot, threadId);
  }

  /** Writes values into the thread's state as if `asNode` had returned them; the new checkpoint. */
  async update(
    scope: string,
    threadId: string,
    values: unknown,
    asNode: string | undefined,
    checkpoint?: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    const record = await this.record(scope, threadId);
    if (record.status === "busy") throw new AgentConflictError(`Thread ${threadId} is running a run; its state changes when the run ends.`);
    const graph = await this.graphOf(record);
    if (graph === undefined)
      throw new AgentConflictError(`Thread ${threadId} has no graph yet: run it once, or create it with a graph_id.`);
    assertReadableMessages(values, "values");
    assertCheckpointNamed(checkpoint);
    // A name the graph's node table inherits (`constructor`, `__proto__`) is no node: LangGraph would trip on it.
    if (asNode !== undefined && !UPDATE_AS.has(asNode) && !Object.hasOwn(graph.nodes, asNode)) {
      throw new AgentInvalidBodyError(`as_node: the graph has no node "${asNode.slice(0, 80)}".`);
    }
    const config = { configurable: { ...checkpoint, thread_id: checkpointThreadId(scope, threadId) } };
    let written: RunnableConfig;
    try {
      written = await this.#backend("the checkpointer", () => graph.updateState(config, values, asNode));
    } catch (error) {
      // What LangGraph refuses of an update (a node that does not exist, values that are not an object) is the client's to fix.
      if (error instanceof BaseLangGraphError) throw new AgentInvalidBodyError(error.message.split("\n")[0] ?? "The update is not valid.");
      throw error;
    }
    const snapshot = await this.#backend("the checkpointer", () =>
      graph.getState({ configurable: { thread_id: checkpointThreadId(scope, threadId) } }),
    );
    const at = new Date().toISOString();
    const status = Object.keys(interruptsOf(snapshot)).length > 0 ? "interrupted" : "idle";
    await this.#backend("the thread records", () => this.records.putThread({ ...record, status, updated_at: at, state_updated_at: at }));
    const configurable = (written.configurable ?? {}) as Record<string, unknown>;
    return {
      checkpoint: {
        thread_id: threadId,
        checkpoint_ns: configurable.checkpoint_ns ?? "",
        checkpoint_id: configurable.checkpoint_id ?? null,
        checkpoint_map: null,
      },
    };
  }

  /** The thread's past states, newest first. */
  async history(
    scope: string,
    threadId: string,
    options: {
      limit: number;
      before?: string | Record<string, unknown> | null;
      metadata?: Record<string, unknown> | null;
      checkpoint?: Record<string, unknown> | null;
    },
  ): Promise<Record<string, unknown>[]> {
    const record = await this.record(scope, threadId);
    const graph = await this.graphOf(record);
    if (graph === undefined) return [];
    const thread = checkpointThreadId(scope, threadId);
    assertCheckpointNamed(options.checkpoint);
    assertCheckpointNamed(typeof options.before === "string" ? { checkpoint_id: options.before } : options.before);
    const before =
      options.before == null
        ? undefined
        : {
            configurable: {
              thread_id: thread,
              ...(typeof options.before === "string" ? { checkpoint_id: options.before } : options.before),
            },
          };
    const states: Record<string, unknown>[] = [];
    const history = graph.getStateHistory(
      { configurable: { checkpoint_ns: "", ...options.checkpoint, thread_id: thread } },
      {
        limit: options.limit,
        ...(before === undefined ? {} : { before }),
        ...(options.metadata == null ? {} : { filter: options.metadata }),
      },
    );
    for await (const snapshot of history) states.push(threadStateOf(snapshot, threadId));
    return states;
  }
}

/** The state of a thread nothing has run on yet. */
function emptyState(threadId: string): Record<string, unknown> {
  return {
    values: {},
    next: [],
    tasks: [],
    metadata: {},
    created_at: null,
    checkpoint: { thread_id: threadId, checkpoint_ns: "", checkpoint_id: null, checkpoint_map: null },
    parent_checkpoint: null,
  };
}
