import { AgentInvalidBodyError, AgentNotFoundError, BackendUnavailableError } from "../../errors/catalogue.js";
import type { AgentThreadRecord } from "../../store/agent-records.js";
import { MULTITASK_STRATEGIES, type MultitaskStrategy } from "../../store/agent-records.js";
import { interruptsOf } from "./agent-graph.js";
import type { AgentRunRequest } from "./agent-run-config.js";
import type { AgentThreads } from "./agent-threads.js";
import type { LoggedProtocolEvent, Matcher, ProtocolFilter, ProtocolLogs } from "./protocol-log.js";
import { inputRequests } from "./protocol-sink.js";

/** A command's answer before its `meta`. */
type Answer = { type: "success"; id: number; result: unknown } | { type: "error"; id: number; error: string; message: string };

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

/** What the transport does for a command that starts a run: the caller's rights and limits, then the engine. */
export type StartRun = (request: AgentRunRequest) => Promise<{ run_id: string }>;

interface Namespaced {
  namespace: string[];
  status: string;
  graphName: string;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

const isStrategy = (value: unknown): value is MultitaskStrategy => MULTITASK_STRATEGIES.includes(value as MultitaskStrategy);

/** A namespace's key in a session's agent tree. */
const keyOf = (namespace: readonly string[]) => JSON.stringify(namespace);

/**
 * LangGraph's streaming protocol v2 (`@langchain/react`'s `useStream`, the SDK's
 * `client.threads.stream`) over this engine's runs: commands on a thread (`run.start`,
 * `input.respond`, `state.get`, `agent.getTree`) and the thread's events, numbered across its
 * runs, replayed from any `seq`. Runs are the engine's own (leases, queues, records, cancel);
 * their events go to the thread's log (`ProtocolLogs`: this process's, or the deployment's in
 * Redis, so that any process answers the thread's commands and streams).
 */
export class ProtocolThreads {
  readonly #options: { threads: AgentThreads; logs: ProtocolLogs; matches: Matcher };

  constructor(options: {
    /** The threads' records and state. */
    threads: AgentThreads;
    /** Every thread's event log. */
    logs: ProtocolLogs;
    /** How a filter matches an event (LangGraph's own `matchesSubscription`). */
    matches: Matcher;
  }) {
    this.#options = options;
  }

  /** The thread's events that match the filter (after its `since`), then each new one until `signal` fires or the server closes. */
  follow(scope: string, threadId: string, filter: ProtocolFilter, signal: AbortSignal): AsyncGenerator<LoggedProtocolEvent> {
    return this.#options.logs.log(scope, threadId).follow(filter, this.#options.matches, signal);
  }

  /** Every event of the thread after `since`, then each new one (a WebSocket's one feed, filtered per subscription). */
  followAll(scope: string, threadId: string, since: number, signal: AbortSignal): AsyncGenerator<LoggedProtocolEvent> {
    return this.#options.logs.log(scope, threadId).follow({ channels: [], since }, () => true, signal);
  }

  /** The `seq` of the thread's last event (0 before the first). */
  seq(scope: string, threadId: string): Promise<number> {
    return this.#options.logs.log(scope, threadId).last();
  }

  /** The thread's logged events after `after`; and the `seq` of its last event. */
  logged(scope: string, threadId: string, after: number): Promise<{ events: readonly LoggedProtocolEvent[]; seq: number }> {
    return this.#options.logs.log(scope, threadId).logged(after);
  }

  /** Ends every follower: the server is closing. */
  async close(): Promise<void> {
    await this.#options.logs.close();
  }

  /** Answers a command on a thread; `start` runs what `run.start` and `input.respond` ask for. */
  async command(scope: string, threadId: string, command: ProtocolCommand, start: StartRun): Promise<ProtocolResponse> {
    let answer: Answer;
    try {
      answer = await this.#answer(scope, threadId, command, start);
    } catch (failure) {
      if (!(failure instanceof AgentInvalidBodyError)) throw failure;
      answer = { type: "error", id: command.id, error: "invalid_argument", message: failure.message };
    }
    const applied = await this.#options.logs.log(scope, threadId).last();
    return { ...answer, meta: { thread_id: threadId, applied_through_seq: applied } };
  }

  async #answer(scope: string, threadId: string, command: ProtocolCommand, start: StartRun): Promise<Answer> {
    const error = (code: string, message: string): Answer => ({ type: "error", id: command.id, error: code, message });
    const success = (result: unknown): Answer => ({ type: "success", id: command.id, result });
    const params = command.params ?? {};
    const { threads } = this.#options;
    switch (command.method) {
      case "run.start": {
        const assistantId = params.assistant_id;
        if (typeof assistantId !== "string" || assistantId === "") return error("invalid_argument", "run.start needs an assistant_id.");
        const record = await threads.find(scope, threadId);
        const running = assistantOf(record);
        if (running !== undefined && running.assistant !== assistantId && running.graph !== assistantId) {
          return error(
            "invalid_argument",
            `Thread ${threadId} runs assistant ${running.graph}; it cannot run ${assistantId.slice(0, 80)}.`,
          );
        }
        // Input on a thread that waits on an interrupt answers it, as LangGraph's server does.
        const resume = params.input != null && (await this.#pendingInterrupts(record)).length > 0;
        const run = await this.#start(assistantId, start, {
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
        const record = await threads.find(scope, threadId);
        const assistantId = assistantOf(record)?.graph;
        if (assistantId === undefined) return error("no_such_run", "This thread has no run yet: start one with run.start.");
        const pending = await this.#pendingInterrupts(record);
        if (pending.length === 0)
          return error("no_such_run", `Thread ${threadId} is not waiting on an interrupt: there is nothing to answer.`);
        const unknown = Object.keys(answers).find((id) => !pending.includes(id));
        if (unknown !== undefined) return error("invalid_argument", `The thread does not wait on interrupt ${unknown.slice(0, 80)}.`);
        // Every client of the thread hears that these are answered, before the run that resumes them starts.
        await this.#say(scope, threadId, "input.answered", { interrupt_ids: Object.keys(answers) });
        await this.#start(assistantId, start, {
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
        const record = await threads.find(scope, threadId);
        // A subgraph's namespace (`["child:<task id>"]`) reads that subgraph's own checkpoint.
        const namespace = namespaceOf(params.namespace);
        if (namespace === null) return error("invalid_argument", "state.get's namespace must be a list of strings.");
        const state =
          record === undefined
            ? undefined
            : await threads.snapshot(record, namespace === "" ? undefined : { checkpoint_ns: namespace }).catch((failure: unknown) => {
                if (namespace === "" || failure instanceof BackendUnavailableError) throw failure;
                return "no-such-namespace" as const;
              });
        // A namespace no subgraph of the thread ran at has no checkpoint: nothing was ever read there.
        if (state === "no-such-namespace" || (namespace !== "" && state !== undefined && state.createdAt === undefined))
          return error("invalid_argument", `No subgraph of this thread runs at namespace ${namespace.slice(0, 120)}.`);
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
      case "state.listCheckpoints": {
        const namespace = namespaceOf(params.namespace);
        if (namespace === null) return error("invalid_argument", "state.listCheckpoints's namespace must be a list of strings.");
        const limit =
          typeof params.limit === "number" && Number.isInteger(params.limit) && params.limit > 0 ? Math.min(params.limit, 1000) : 10;
        if ((await threads.find(scope, threadId)) === undefined) return success({ checkpoints: [] });
        const history = await threads.history(scope, threadId, {
          limit,
          ...(typeof params.before === "string" ? { before: params.before } : {}),
          ...(namespace === "" ? {} : { checkpoint: { checkpoint_ns: namespace } }),
        });
        return success({ checkpoints: history.map(checkpointSummary) });
      }
      case "state.fork": {
        const checkpointId = params.checkpoint_id;
        if (typeof checkpointId !== "string" || checkpointId === "") return error("invalid_argument", "state.fork needs a checkpoint_id.");
        const record = await threads.find(scope, threadId);
        const assistantId = assistantOf(record)?.graph;
        if (assistantId === undefined) return error("no_such_run", "This thread has no run yet: start one with run.start.");
        // A checkpoint of this thread only: another thread's is not found here.
        const found = await threads.state(scope, threadId, { checkpoint_id: checkpointId }).then(
          () => true,
          (failure: unknown) => {
            if (failure instanceof AgentNotFoundError) return false;
            throw failure;
          },
        );
        if (!found) return error("invalid_argument", `checkpoint_id: thread ${threadId} has no checkpoint ${checkpointId.slice(0, 80)}.`);
        const config = isRecord(params.config) ? params.config : {};
        const configurable = isRecord(config.configurable) ? config.configurable : {};
        const run = await this.#start(assistantId, start, {
          ...(params.input === undefined ? {} : { input: params.input }),
          config: { ...config, configurable: { ...configurable, checkpoint_id: checkpointId, checkpoint_ns: "" } },
          metadata: params.metadata,
        });
        return success({ run_id: run.run_id, thread_id: threadId });
      }
      case "input.inject": {
        const message = params.message;
        if (!isRecord(message) || (message.role !== "user" && message.role !== "system") || typeof message.content !== "string") {
          return error("invalid_argument", 'input.inject needs a message: { role: "user" | "system", content: a string }.');
        }
        const assistantId = assistantOf(await threads.find(scope, threadId))?.graph;
        if (assistantId === undefined) return error("no_such_run", "This thread has no run yet: start one with run.start.");
        // After what runs now: the graph reads it in a run of its own, next in the thread's queue.
        await this.#start(assistantId, start, {
          input: { messages: [{ ...message }] },
          config: {},
          metadata: {},
          multitaskStrategy: "enqueue",
        });
        return success({});
      }
      case "agent.getTree": {
        const { events } = await this.#options.logs.log(scope, threadId).logged(0);
        const record = await threads.find(scope, threadId);
        return success({ tree: treeOf(events, assistantOf(record)?.graph ?? "") });
      }
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
  }

  /** An event of the server's own on the thread's log (root namespace), written before this returns. */
  async #say(scope: string, threadId: string, method: string, data: unknown): Promise<void> {
    const log = this.#options.logs.log(scope, threadId);
    const release = log.hold();
    try {
      log.push(method, [], data);
      await log.flush();
    } finally {
      release();
    }
  }

  /**
   * `subscription.reconnect` on a WebSocket: subscriptions live with their socket here, so none
   * is restored (the client subscribes again, with `since`); how many events it missed after
   * `last_event_id`, and each namespace's status now.
   */
  async reconnect(scope: string, threadId: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const { events, seq } = await this.#options.logs.log(scope, threadId).logged(0);
    const last = typeof params.last_event_id === "string" && /^\d+$/u.test(params.last_event_id) ? Number(params.last_event_id) : undefined;
    const record = await this.#options.threads.find(scope, threadId);
    const statuses: { namespace: string[]; status: string }[] = [];
    const walk = (node: Record<string, unknown>) => {
      statuses.push({ namespace: node.namespace as string[], status: String(node.status) });
      for (const child of (node.children as Record<string, unknown>[] | undefined) ?? []) walk(child);
    };
    walk(treeOf(events, assistantOf(record)?.graph ?? ""));
    return { restored: false, ...(last === undefined ? {} : { missed_events: Math.max(0, seq - last) }), current_namespaces: statuses };
  }

  /** Starts a protocol run on the thread: its events go to the thread's log, from whichever process runs it. */
  #start(
    assistantId: string,
    start: StartRun,
    params: { input?: unknown; command?: AgentRunRequest["command"]; config: unknown; metadata: unknown; multitaskStrategy?: unknown },
  ): Promise<{ run_id: string }> {
    const config = isRecord(params.config) ? params.config : {};
    return start({
      assistantId,
      ...(params.input === undefined ? {} : { input: params.input }),
      ...(params.command === undefined ? {} : { command: params.command }),
      streamMode: ["values"],
      subgraphs: true,
      config: config as AgentRunRequest["config"],
      metadata: isRecord(params.metadata) ? params.metadata : {},
      multitaskStrategy: isStrategy(params.multitaskStrategy) ? params.multitaskStrategy : "enqueue",
      ifNotExists: "create",
      onCompletion: "keep",
      protocol: true,
    });
  }

  /**
   * The ids of the interrupts the thread waits on. Only a thread whose record says it is
   * interrupted is read from the checkpointer: a new or idle one waits on nothing.
   */
  async #pendingInterrupts(record: AgentThreadRecord | undefined): Promise<string[]> {
    if (record?.status !== "interrupted") return [];
    const state = await this.#options.threads.snapshot(record);
    return inputRequests(Object.values(interruptsOf(state)).flat()).map((request) => request.interrupt_id);
  }
}

/** The assistant a thread's runs ran (as its record says), by graph and by assistant id. */
function assistantOf(record: AgentThreadRecord | undefined): { graph: string; assistant: unknown } | undefined {
  const graph = record?.metadata.graph_id ?? record?.graph_id;
  return typeof graph === "string" ? { graph, assistant: record?.metadata.assistant_id } : undefined;
}

/**
 * The thread's agent tree, as its logged events tell it: every namespace an event names (each
 * prefix first, `started`), the status its last lifecycle event gave, the root's from its own.
 */
function treeOf(events: readonly LoggedProtocolEvent[], rootGraph: string): Record<string, unknown> {
  const known = new Map<string, Namespaced>([[keyOf([]), { namespace: [], status: "started", graphName: rootGraph }]]);
  for (const { event } of events) {
    const { namespace, data } = event.params;
    for (let length = 1; length <= namespace.length; length += 1) {
      const part = namespace.slice(0, length);
      if (!known.has(keyOf(part)))
        known.set(keyOf(part), { namespace: part, status: "started", graphName: (part.at(-1) ?? "").split(":")[0] ?? "" });
    }
    if (event.method !== "lifecycle" || !isRecord(data)) continue;
    const node = known.get(keyOf(namespace))!;
    node.status = String(data.event);
    if (typeof data.graph_name === "string") node.graphName = data.graph_name;
  }
  const build = (node: Namespaced): Record<string, unknown> => {
    const children = [...known.values()]
      .filter(
        (candidate) =>
          candidate.namespace.length === node.namespace.length + 1 &&
          node.namespace.every((part, index) => candidate.namespace[index] === part),
      )
      .sort((first, second) => keyOf(first.namespace).localeCompare(keyOf(second.namespace)))
      .map(build);
    return { namespace: node.namespace, status: node.status, graph_name: node.graphName, ...(children.length === 0 ? {} : { children }) };
  };
  return build(known.get(keyOf([]))!);
}

/** A protocol namespace as a checkpoint namespace (`""` for the root), or null when it is not a list of strings. */
function namespaceOf(value: unknown): string | null {
  if (value == null) return "";
  if (!Array.isArray(value) || !value.every((part) => typeof part === "string")) return null;
  return value.join("|");
}

/** A thread state of the history as the protocol's checkpoint summary. */
function checkpointSummary(state: Record<string, unknown>): Record<string, unknown> {
  const metadata = isRecord(state.metadata) ? state.metadata : {};
  const checkpoint = isRecord(state.checkpoint) ? state.checkpoint : {};
  const writes = isRecord(metadata.writes) ? Object.keys(metadata.writes) : [];
  return {
    id: checkpoint.checkpoint_id,
    timestamp: state.created_at,
    step: typeof metadata.step === "number" ? metadata.step : 0,
    ...(writes[0] === undefined ? {} : { node_name: writes[0] }),
    metadata,
  };
}
