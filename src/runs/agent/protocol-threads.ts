import { AgentInvalidBodyError } from "../../errors/catalogue.js";
import { MULTITASK_STRATEGIES, type MultitaskStrategy } from "../../store/agent-records.js";
import { FairMap } from "../../util/fair-share.js";
import { interruptsOf } from "./agent-graph.js";
import type { AgentRunRequest } from "./agent-run-config.js";
import type { AgentThreads } from "./agent-threads.js";
import { type LoggedProtocolEvent, type ProtocolEvent, type ProtocolFilter, ProtocolLog } from "./protocol-log.js";

/** A command of protocol v2, as `POST /threads/{id}/commands` takes it. */
export interface ProtocolCommand {
  id: number;
  method: string;
  params?: Record<string, unknown>;
}

/** Its answer: a success with its result, or an error with the protocol's code. */
export type ProtocolResponse =
  | { type: "success"; id: number; result: unknown; meta: { thread_id: string; applied_through_seq: number } }
  | { type: "error"; id: number; error: string; message: string; meta: { thread_id: string; applied_through_seq: number } };

/** An event of `streamEvents(…, { version: "v3" })`, as a protocol run hands it over. */
export interface RunProtocolEvent {
  method: string;
  params: { namespace: string[]; node?: string; data: unknown };
}

/** Where a protocol run sends its events, and how it ended. */
export interface ProtocolSink {
  event(event: RunProtocolEvent): void;
  ended(end: { status: "success" | "error" | "interrupted" | "pending" | "running"; interrupted: boolean; failure: string | null }): void;
}

/** What the transport does for a command that starts a run: the caller's rights and limits, then the engine. */
export type StartRun = (request: AgentRunRequest) => Promise<{ run_id: string }>;

interface Namespaced {
  namespace: string[];
  status: string;
  graphName: string;
}

/** A thread as protocol v2 sees it in this process: its event log, its assistant, its agent tree. */
interface ThreadSession {
  /** The tenant whose thread it is: what the cap's fair eviction counts by. */
  scope: string;
  log: ProtocolLog;
  assistantId?: string;
  namespaces: Map<string, Namespaced>;
  /** Interrupts already announced (`input.requested`), so a later `values` does not repeat them. */
  announced: Set<string>;
  runsInFlight: number;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** `{ id, value }` interrupts as the protocol's `input.requested` data. */
function inputRequests(value: unknown): { interrupt_id: string; payload: unknown }[] {
  const list = Array.isArray(value) ? value : isRecord(value) && Array.isArray(value.__interrupt__) ? value.__interrupt__ : [];
  return list.flatMap((entry: unknown) =>
    isRecord(entry) && typeof entry.id === "string" ? [{ interrupt_id: entry.id, payload: entry.value }] : [],
  );
}

const isStrategy = (value: unknown): value is MultitaskStrategy => MULTITASK_STRATEGIES.includes(value as MultitaskStrategy);

/** A namespace's key in a session's agent tree. */
const keyOf = (namespace: readonly string[]) => JSON.stringify(namespace);

/**
 * LangGraph's streaming protocol v2 (`@langchain/react`'s `useStream`, the SDK's
 * `client.threads.stream`) over this engine's runs: commands on a thread (`run.start`,
 * `input.respond`, `state.get`, `agent.getTree`) and the thread's events, numbered across its
 * runs, replayed from any `seq`. Runs are the engine's own (leases, queues, records, cancel);
 * this keeps each thread's event log, bounded in events and in threads.
 */
export class ProtocolThreads {
  /** Each tenant's sessions, least recently used first: what forgetting takes. */
  #sessions = new FairMap<ThreadSession>((session) => session.scope);
  readonly #options: {
    threads: AgentThreads;
    maxThreads: number;
    eventsPerThread: number;
    matches: (event: ProtocolEvent, filter: ProtocolFilter) => boolean;
  };

  constructor(options: {
    /** The threads' records and state. */
    threads: AgentThreads;
    /** How a filter matches an event (LangGraph's own `matchesSubscription`). */
    matches: (event: ProtocolEvent, filter: ProtocolFilter) => boolean;
    maxThreads?: number;
    eventsPerThread?: number;
  }) {
    this.#options = { maxThreads: 1_000, eventsPerThread: 10_000, ...options };
  }

  /**
   * The thread's session, made its tenant's most recently used. At most `maxThreads` are kept:
   * past it, the tenant holding the most forgets its least recently used that nobody follows
   * and nothing runs on (never the one just asked for).
   */
  #session(scope: string, threadId: string): ThreadSession {
    const key = `${scope}\u0000${threadId}`;
    const session = this.#sessions.get(key) ?? {
      scope,
      log: new ProtocolLog(this.#options.eventsPerThread),
      namespaces: new Map(),
      announced: new Set(),
      runsInFlight: 0,
    };
    this.#sessions.set(key, session);
    const busy = (other: ThreadSession) => other === session || other.log.followers > 0 || other.runsInFlight > 0;
    for (const [, forgotten] of this.#sessions.evictOver(this.#options.maxThreads, busy)) forgotten.log.close();
    return session;
  }

  /** The thread's events that match the filter (after its `since`), then each new one until `signal` fires or the server closes. */
  follow(scope: string, threadId: string, filter: ProtocolFilter, signal: AbortSignal): AsyncGenerator<LoggedProtocolEvent> {
    return this.#session(scope, threadId).log.follow(filter, this.#options.matches, signal);
  }

  /** Every event of the thread after `since`, then each new one (a WebSocket's one feed, filtered per subscription). */
  followAll(scope: string, threadId: string, since: number, signal: AbortSignal): AsyncGenerator<LoggedProtocolEvent> {
    return this.#session(scope, threadId).log.follow({ channels: [], since }, () => true, signal);
  }

  /** The `seq` of the thread's last event (0 before the first). */
  seq(scope: string, threadId: string): number {
    return this.#session(scope, threadId).log.seq;
  }

  /** The thread's logged events after `after`, now; and the `seq` of its last event. */
  logged(scope: string, threadId: string, after: number): { events: readonly LoggedProtocolEvent[]; seq: number } {
    const { log } = this.#session(scope, threadId);
    return { events: log.logged(after), seq: log.seq };
  }

  /** Ends every follower: the server is closing. */
  close(): void {
    for (const session of this.#sessions.values()) session.log.close();
    this.#sessions = new FairMap<ThreadSession>((session) => session.scope);
  }

  /** Answers a command on a thread; `start` runs what `run.start` and `input.respond` ask for. */
  async command(scope: string, threadId: string, command: ProtocolCommand, start: StartRun): Promise<ProtocolResponse> {
    const session = this.#session(scope, threadId);
    const meta = () => ({ thread_id: threadId, applied_through_seq: session.log.seq });
    const error = (code: string, message: string): ProtocolResponse => ({
      type: "error",
      id: command.id,
      error: code,
      message,
      meta: meta(),
    });
    const success = (result: unknown): ProtocolResponse => ({ type: "success", id: command.id, result, meta: meta() });
    const params = command.params ?? {};
    try {
      switch (command.method) {
        case "run.start": {
          const assistantId = params.assistant_id;
          if (typeof assistantId !== "string" || assistantId === "") return error("invalid_argument", "run.start needs an assistant_id.");
          if (session.assistantId !== undefined && session.assistantId !== assistantId) {
            return error("invalid_argument", `Thread ${threadId} runs assistant ${session.assistantId}; it cannot run ${assistantId}.`);
          }
          // Input on a thread that waits on an interrupt answers it, as LangGraph's server does.
          const resume = params.input != null && (await this.#pendingInterrupts(scope, threadId)).length > 0;
          const run = await this.#start(session, assistantId, start, {
            ...(resume ? { command: { resume: params.input } } : params.input === undefined ? {} : { input: params.input }),
            config: params.config,
            metadata: params.metadata,
            multitaskStrategy: params.multitaskStrategy,
          });
          return success({ run_id: run.run_id });
        }
        case "input.respond": {
          const answers: Record<string, unknown> = {};
          if (Array.isArray(params.responses)) {
            for (const entry of params.responses) {
              if (!isRecord(entry) || typeof entry.interrupt_id !== "string") {
                return error("invalid_argument", "Each of input.respond's responses needs an interrupt_id.");
              }
              answers[entry.interrupt_id] = entry.response;
            }
            if (Object.keys(answers).length === 0) return error("invalid_argument", "input.respond needs at least one response.");
          } else if (typeof params.interrupt_id === "string") {
            answers[params.interrupt_id] = params.response;
          } else {
            return error("invalid_argument", "input.respond needs an interrupt_id (or responses).");
          }
          const assistantId = session.assistantId ?? (await this.#options.threads.find(scope, threadId))?.graph_id;
          if (assistantId === undefined) return error("no_such_run", "This thread has no run yet: start one with run.start.");
          const pending = await this.#pendingInterrupts(scope, threadId);
          if (pending.length === 0)
            return error("no_such_run", `Thread ${threadId} is not waiting on an interrupt: there is nothing to answer.`);
          const unknown = Object.keys(answers).find((id) => !pending.includes(id));
          if (unknown !== undefined) return error("invalid_argument", `The thread does not wait on interrupt ${unknown.slice(0, 80)}.`);
          await this.#start(session, assistantId, start, {
            command: {
              resume: answers,
              ...(params.update == null ? {} : { update: params.update }),
              ...(params.goto == null ? {} : { goto: params.goto }),
            },
            config: params.config,
            metadata: params.metadata,
          });
          return success({});
        }
        case "state.get": {
          if (Array.isArray(params.namespace) && params.namespace.length > 0) {
            return error("not_supported", "state.get reads the thread's root graph here; a subgraph's state is part of its values.");
          }
          const record = await this.#options.threads.find(scope, threadId);
          const state = record === undefined ? undefined : await this.#options.threads.snapshot(record);
          if (state === undefined) return error("no_such_run", "This thread has no run yet: start one with run.start.");
          const keys =
            Array.isArray(params.keys) && params.keys.every((key) => typeof key === "string") ? (params.keys as string[]) : undefined;
          const values =
            isRecord(state.values) && keys !== undefined
              ? Object.fromEntries(Object.entries(state.values).filter(([key]) => keys.includes(key)))
              : state.values;
          const configurable = (state.config?.configurable ?? {}) as Record<string, unknown>;
          const checkpoint =
            typeof configurable.checkpoint_id === "string"
              ? {
                  id: configurable.checkpoint_id,
                  ...(typeof configurable.checkpoint_ns === "string" ? { ns: configurable.checkpoint_ns } : {}),
                }
              : undefined;
          return success({ values: values ?? {}, ...(checkpoint === undefined ? {} : { checkpoint }) });
        }
        case "agent.getTree":
          return success({ tree: this.#tree(session, []) });
        case "subscription.subscribe":
        case "subscription.unsubscribe":
        case "subscription.reconnect":
          return error(
            "not_supported",
            `${command.method} is for the WebSocket transport (GET /threads/${threadId}/stream/events, upgraded); over HTTP, follow the thread with POST /threads/${threadId}/stream/events.`,
          );
        default:
          return error("unknown_command", `Unknown protocol command: ${command.method.slice(0, 80)}.`);
      }
    } catch (failure) {
      if (failure instanceof AgentInvalidBodyError) return error("invalid_argument", failure.message);
      throw failure;
    }
  }

  /** Starts a protocol run on the thread: the root `running` lifecycle now, the run's events as they come, its end. */
  async #start(
    session: ThreadSession,
    assistantId: string,
    start: StartRun,
    params: { input?: unknown; command?: AgentRunRequest["command"]; config: unknown; metadata: unknown; multitaskStrategy?: unknown },
  ): Promise<{ run_id: string }> {
    const config = isRecord(params.config) ? params.config : {};
    const strategy = isStrategy(params.multitaskStrategy) ? params.multitaskStrategy : "enqueue";
    const graphName = assistantId;
    const request: AgentRunRequest = {
      assistantId,
      ...(params.input === undefined ? {} : { input: params.input }),
      ...(params.command === undefined ? {} : { command: params.command }),
      streamMode: ["values"],
      subgraphs: true,
      config: config as AgentRunRequest["config"],
      metadata: isRecord(params.metadata) ? params.metadata : {},
      multitaskStrategy: strategy,
      ifNotExists: "create",
      onCompletion: "keep",
    };
    const { sink, open } = this.#sink(session, graphName);
    session.runsInFlight += 1;
    let run: { run_id: string };
    try {
      run = await start({ ...request, protocol: sink });
    } catch (error) {
      session.runsInFlight -= 1;
      throw error;
    }
    session.assistantId = assistantId;
    open();
    return run;
  }

  /** Turns a run's v3 events into the thread's protocol events; the root lifecycle is the session's own. */
  #sink(session: ThreadSession, graphName: string): { sink: ProtocolSink; open(): void } {
    const { log } = session;
    // The run's root `running`: once it is started, or at its first event if that comes sooner.
    let opened = false;
    const open = () => {
      if (opened) return;
      opened = true;
      session.announced.clear();
      session.namespaces.set(keyOf([]), { namespace: [], status: "running", graphName });
      log.push("lifecycle", [], { event: "running", graph_name: graphName });
    };
    const announce = (namespace: string[], value: unknown) => {
      for (const request of inputRequests(value)) {
        if (session.announced.has(request.interrupt_id)) continue;
        session.announced.add(request.interrupt_id);
        log.push("input", namespace, request);
      }
    };
    // The agent tree: every namespace an event names, each prefix first; a lifecycle event sets its status.
    const track = (namespace: string[], lifecycle?: Record<string, unknown>) => {
      for (let length = 1; length <= namespace.length; length += 1) {
        const part = namespace.slice(0, length);
        if (!session.namespaces.has(keyOf(part))) {
          session.namespaces.set(keyOf(part), { namespace: part, status: "started", graphName: (part.at(-1) ?? "").split(":")[0] ?? "" });
        }
      }
      const known = session.namespaces.get(keyOf(namespace));
      if (lifecycle === undefined || known === undefined) return;
      known.status = String(lifecycle.event);
      if (typeof lifecycle.graph_name === "string") known.graphName = lifecycle.graph_name;
    };
    const sink: ProtocolSink = {
      event: ({ method, params }) => {
        open();
        const { namespace, data } = params;
        switch (method) {
          case "lifecycle": {
            // The root's lifecycle is the session's: it knows the run's status and the thread's interrupts.
            if (namespace.length === 0) return;
            track(namespace, isRecord(data) ? data : {});
            log.push("lifecycle", namespace, data);
            return;
          }
          case "values": {
            if (namespace.length > 0) track(namespace);
            if (isRecord(data) && "__interrupt__" in data) {
              announce(namespace, data.__interrupt__);
              const { __interrupt__: _, ...rest } = data;
              if (Object.keys(rest).length > 0) log.push("values", namespace, rest);
              return;
            }
            log.push("values", namespace, data);
            return;
          }
          case "updates": {
            if (namespace.length > 0) track(namespace);
            const update = isRecord(data) ? data : {};
            if (update.node === "__interrupt__") announce(namespace, update.values);
            else log.push("updates", namespace, update.values, typeof update.node === "string" ? update.node : params.node);
            return;
          }
          default: {
            if (namespace.length > 0) track(namespace);
            if (method.startsWith("custom:")) log.push("custom", namespace, { name: method.slice("custom:".length), payload: data });
            else log.push(method, namespace, data, params.node);
          }
        }
      },
      ended: ({ status, interrupted, failure }) => {
        open();
        session.runsInFlight = Math.max(0, session.runsInFlight - 1);
        const event =
          status === "error"
            ? "failed"
            : status === "interrupted" || interrupted || session.announced.size > 0
              ? "interrupted"
              : "completed";
        session.namespaces.set(keyOf([]), { namespace: [], status: event, graphName });
        log.push("lifecycle", [], { event, graph_name: graphName, ...(failure === null ? {} : { error: failure }) });
      },
    };
    return { sink, open };
  }

  #tree(session: ThreadSession, namespace: string[]): Record<string, unknown> {
    const known = session.namespaces.get(keyOf(namespace));
    const children = [...session.namespaces.values()]
      .filter(
        (candidate) =>
          candidate.namespace.length === namespace.length + 1 && namespace.every((part, index) => candidate.namespace[index] === part),
      )
      .sort((first, second) => JSON.stringify(first.namespace).localeCompare(JSON.stringify(second.namespace)))
      .map((child) => this.#tree(session, child.namespace));
    return {
      namespace,
      status: known?.status ?? "started",
      graph_name: known?.graphName ?? session.assistantId ?? "",
      ...(children.length === 0 ? {} : { children }),
    };
  }

  /**
   * The ids of the interrupts the thread waits on. Only a thread whose record says it is
   * interrupted is read from the checkpointer: a new or idle one waits on nothing.
   */
  async #pendingInterrupts(scope: string, threadId: string): Promise<string[]> {
    const record = await this.#options.threads.find(scope, threadId);
    if (record?.status !== "interrupted") return [];
    const state = await this.#options.threads.snapshot(record);
    return inputRequests(Object.values(interruptsOf(state)).flat()).map((request) => request.interrupt_id);
  }
}
