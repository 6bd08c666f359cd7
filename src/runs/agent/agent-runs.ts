import type { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { v7 as uuid7, validate as validateUuid } from "@langchain/core/utils/uuid";
import { Command } from "@langchain/langgraph";
import type { RunLease } from "../../coordination/run-coordinator.js";
import { AgentConflictError, AgentInvalidBodyError, AgentNotFoundError } from "../../errors/catalogue.js";
import type { GraphRegistry } from "../../registry/graph-registry.js";
import type { AgentRecords, AgentRunRecord, AgentThreadRecord } from "../../store/agent-records.js";
import { anySignal } from "../../util/any-signal.js";
import { withDeadline } from "../../util/deadline.js";
import type { Usage } from "../../wire/response.js";
import type { RunTracker } from "../run-tracker.js";
import { UsageCollector } from "../usage.js";
import { type AgentGraph, interruptsOf } from "./agent-graph.js";
import { type AgentRunRequest, checkpointThreadId, deleteCheckpoints, runnableConfigOf } from "./agent-run-config.js";
import { agentStreamEvents } from "./agent-stream.js";
import { modelOfAssistant } from "./assistants.js";
import { assertReadableMessages } from "./input-messages.js";
import type { RunProtocolEvent } from "./protocol-threads.js";
import { RunEvents } from "./run-events.js";

export interface AgentRunsOptions {
  registry: GraphRegistry;
  records: AgentRecords;
  /** The server's runs in flight, so that a drain waits for these too. */
  tracker: RunTracker;
  backendTimeoutMs: number;
  log?: { warn(object: Record<string, unknown>, message: string): void; error(object: Record<string, unknown>, message: string): void };
  tracing?: { handler(): Promise<BaseCallbackHandler> };
  /** Told of the usage the models of each run reported, when it ends (the token metrics). */
  onUsage?: (model: string, usage: Usage | undefined) => void;
  /** How long a finished run's events stay for a join (default 10 minutes)… */
  retainEventsMs?: number;
  /** …and how many finished runs keep theirs at most (default 1,000, the oldest going first). */
  retainEventsOf?: number;
}

/** A run this process executes, from its creation to a while after its end. */
interface LiveRun {
  record: AgentRunRecord;
  events: RunEvents;
  controller: AbortController;
  /** Settles when the run has ended, whatever the way. */
  done: Promise<void>;
  /** The state's values when the run ended (or the error it ended with). */
  result?: unknown;
  /** Why it was cancelled, when it was. */
  cancelled?: "interrupt" | "rollback";
}

const now = () => new Date().toISOString();

/** How often a join of a run on another process looks at its record. */
const ELSEWHERE_POLL_MS = 250;

/**
 * The Agent Protocol's runs: each on a thread of the server's checkpointer, one at a time per
 * thread (a lease, so across processes too), its events logged for every client that follows
 * it, its record and its thread's status kept in the records.
 */
export class AgentRuns {
  readonly #options: AgentRunsOptions;
  readonly #live = new Map<string, LiveRun>();
  /** Runs that have ended and still keep their events for joins, oldest first, with when they ended. */
  readonly #ended = new Map<string, number>();
  /** The runs of each thread that have not ended, in order: the first runs, the rest wait (`enqueue`). */
  readonly #queues = new Map<string, LiveRun[]>();

  constructor(options: AgentRunsOptions) {
    this.#options = options;
  }

  #backend<T>(what: string, operation: () => Promise<T>): Promise<T> {
    return withDeadline(what, this.#options.backendTimeoutMs, operation());
  }

  /** The graph of an assistant as this surface runs it: on a checkpointer. */
  async graphOf(assistantId: string): Promise<{ model: string; graph: AgentGraph }> {
    const model = modelOfAssistant(this.#options.registry, assistantId);
    const resolved = await this.#options.registry.resolve(model);
    return { model, graph: resolved.onThreads() as unknown as AgentGraph };
  }

  /**
   * Creates a run and starts it (or queues it behind the thread's current run). Every error a
   * client can cause is thrown here, before anything is sent.
   */
  async start(
    scope: string,
    threadId: string | undefined,
    request: AgentRunRequest,
    /** Called once the run has ended (a concurrent-run slot given back). */
    onEnd?: () => Promise<void>,
  ): Promise<{ run: AgentRunRecord; events: RunEvents }> {
    const { model, graph } = await this.graphOf(request.assistantId);
    if (request.command !== undefined && request.input != null) {
      throw new AgentConflictError("Send either input or command, not both.", 422);
    }
    assertReadableMessages(request.input, "input");
    assertReadableMessages(request.command?.update, "command.update");
    const temporary = threadId === undefined;
    const id = threadId ?? uuid7();
    let thread = temporary ? undefined : await this.#backend("the thread records", () => this.#options.records.getThread(scope, id));
    if (thread === undefined) {
      if (!temporary && request.ifNotExists !== "create") throw new AgentNotFoundError("thread", id);
      if (!validateUuid(id))
        throw new AgentInvalidBodyError(`Thread ${id.slice(0, 80)} cannot be created: a thread id must be a UUID, as LangGraph's are.`);
      const at = now();
      thread = {
        thread_id: id,
        scope,
        graph_id: model,
        created_at: at,
        updated_at: at,
        state_updated_at: at,
        metadata: { graph_id: model },
        status: "idle",
      };
    }
    const key = `${scope}\u0000${id}`;
    const queue = this.#queues.get(key) ?? [];
    if (queue.length > 0 && request.multitaskStrategy === "reject") {
      throw new AgentConflictError("This thread is already running a run. Wait for it to finish, or choose another multitask_strategy.");
    }
    if (request.command?.resume !== undefined && queue.length === 0 && thread.status !== "interrupted") {
      throw new AgentConflictError(`Thread ${id} is not waiting on an interrupt: there is nothing to resume.`);
    }
    // The thread's lease, at once when nothing runs on it here: another process may be running it.
    let lease: RunLease | undefined;
    if (queue.length === 0 && !temporary) {
      const coordinator = this.#options.registry.coordinatorOf(model);
      lease = (await this.#backend("the run coordinator", () => coordinator.tryAcquire(`agent-thread:${key}`))) ?? undefined;
      if (lease === undefined) {
        throw new AgentConflictError(
          "This thread is running a run on another server process. Wait for it to finish (join it), then send this run again.",
        );
      }
    }
    const at = now();
    const record: AgentRunRecord = {
      run_id: uuid7(),
      thread_id: id,
      assistant_id: request.assistantId,
      scope,
      created_at: at,
      updated_at: at,
      status: "pending",
      metadata: request.metadata,
      multitask_strategy: request.multitaskStrategy,
      temporary: temporary && request.onCompletion === "delete",
    };
    try {
      await this.#backend("the thread records", async () => {
        await this.#options.records.putThread({ ...thread, status: "busy", updated_at: at, graph_id: model });
        await this.#options.records.putRun(record);
      });
    } catch (error) {
      await lease?.release().catch(() => {});
      throw error;
    }
    const controller = this.#options.tracker.start();
    const live: LiveRun = { record, events: new RunEvents(), controller, done: Promise.resolve() };
    const before = [...queue];
    queue.push(live);
    this.#queues.set(key, queue);
    this.#live.set(record.run_id, live);
    if (request.multitaskStrategy === "interrupt" || request.multitaskStrategy === "rollback") {
      for (const earlier of before) this.#cancelLive(earlier, request.multitaskStrategy);
    }
    live.done = this.#execute(live, key, before, { model, graph, request, thread }, lease).finally(() => onEnd?.().catch(() => {}));
    return { run: record, events: live.events };
  }

  async #execute(
    live: LiveRun,
    key: string,
    before: LiveRun[],
    run: { model: string; graph: AgentGraph; request: AgentRunRequest; thread: AgentThreadRecord },
    /** The thread's lease, when `start` took it. */
    taken: RunLease | undefined,
  ): Promise<void> {
    const { record, events, controller } = live;
    const { request, graph } = run;
    const checkpointThread = checkpointThreadId(record.scope, record.thread_id);
    let lease: RunLease | null | undefined = taken;
    let usage: UsageCollector | undefined;
    let signal: ReturnType<typeof anySignal> | undefined;
    let status: AgentRunRecord["status"] = "success";
    let threadStatus: AgentThreadRecord["status"] = "idle";
    let failure: string | null = null;
    try {
      // Runs of one thread take turns: an enqueued run starts when those before it have ended.
      for (const earlier of before) await earlier.done;
      if (controller.signal.aborted) throw controller.signal.reason;
      if (lease === undefined) {
        const coordinator = this.#options.registry.coordinatorOf(run.model);
        lease = await this.#backend("the run coordinator", () => coordinator.tryAcquire(`agent-thread:${key}`));
      }
      if (lease === null) throw new AgentConflictError("This thread is running a run on another server process.");
      await this.#setRun(live, "running");
      events.push("metadata", { run_id: record.run_id, attempt: 1 });
      signal = anySignal([controller.signal, lease.signal]);
      const callbacks: BaseCallbackHandler[] = this.#options.tracing === undefined ? [] : [await this.#options.tracing.handler()];
      if (this.#options.onUsage !== undefined) {
        usage = new UsageCollector();
        callbacks.push(usage);
      }
      const config = runnableConfigOf(request, {
        runId: record.run_id,
        threadId: record.thread_id,
        checkpointThread,
        model: run.model,
        callbacks,
        signal: signal.signal,
      });
      const input =
        request.command === undefined ? (request.input ?? null) : new Command(request.command as ConstructorParameters<typeof Command>[0]);
      if (request.protocol !== undefined) {
        // Protocol v2: LangGraph's own protocol events, every mode, subgraphs included.
        const stream = await graph.streamEvents(input, { ...config, version: "v3" });
        for await (const event of stream as AsyncIterable<RunProtocolEvent>) request.protocol.event(event);
      } else {
        for await (const { event, data } of agentStreamEvents({
          graph,
          input,
          config,
          modes: request.streamMode,
          subgraphs: request.subgraphs,
          runId: record.run_id,
        })) {
          events.push(event, data);
        }
      }
      const state = await this.#backend("the checkpointer", () => graph.getState({ configurable: { thread_id: checkpointThread } }));
      const interrupts = Object.values(interruptsOf(state)).flat();
      // A run that paused answers with the state and what it waits on, as LangGraph's servers do.
      live.result = interrupts.length === 0 ? state.values : { ...(state.values as object), __interrupt__: interrupts };
      if (interrupts.length > 0 || (state.next ?? []).length > 0) threadStatus = "interrupted";
    } catch (error) {
      if (live.cancelled !== undefined || controller.signal.aborted) {
        status = "interrupted";
        threadStatus = "idle";
      } else {
        status = "error";
        threadStatus = "error";
        failure = error instanceof Error ? error.message : String(error);
        const name = error instanceof Error ? error.name : "Error";
        live.result = { __error__: { error: name, message: failure } };
        events.push("error", { error: name, message: failure });
        if (!(error instanceof AgentConflictError))
          this.#options.log?.error({ err: error, runId: record.run_id }, "an Agent Protocol run failed");
      }
    } finally {
      events.finish();
      signal?.dispose();
      if (usage !== undefined) this.#options.onUsage?.(run.model, usage.usage());
      await lease?.release().catch(() => {});
      this.#options.tracker.finish(controller);
      const queue = (this.#queues.get(key) ?? []).filter((other) => other !== live);
      if (queue.length === 0) this.#queues.delete(key);
      else this.#queues.set(key, queue);
      await this.#settle(live, run, { status, threadStatus, failure, busy: queue.length > 0 });
      request.protocol?.ended({ status, interrupted: threadStatus === "interrupted", failure });
      this.#ended.set(record.run_id, Date.now());
      this.#forgetEnded();
    }
  }

  /** The run's and its thread's records once it has ended; a temporary thread is deleted with its checkpoints. */
  async #settle(
    live: LiveRun,
    run: { model: string; graph: AgentGraph; thread: AgentThreadRecord },
    end: { status: AgentRunRecord["status"]; threadStatus: AgentThreadRecord["status"]; failure: string | null; busy: boolean },
  ): Promise<void> {
    const { records, registry } = this.#options;
    const { record } = live;
    try {
      if (record.temporary) {
        await this.#backend("the thread records", () => records.deleteThread(record.scope, record.thread_id));
        await this.#backend("the checkpointer", () => deleteCheckpoints(run.graph, checkpointThreadId(record.scope, record.thread_id)));
        return;
      }
      if (live.cancelled === "rollback") await this.#backend("the thread records", () => records.deleteRun(record.scope, record.run_id));
      else await this.#setRun(live, end.status);
      const thread = await this.#backend("the thread records", () => records.getThread(record.scope, record.thread_id));
      if (thread === undefined) return;
      const at = now();
      await this.#backend("the thread records", () =>
        records.putThread({
          ...thread,
          status: end.busy ? "busy" : end.threadStatus,
          updated_at: at,
          state_updated_at: at,
          error: end.failure,
        }),
      );
    } catch (error) {
      this.#options.log?.warn(
        { err: error, runId: record.run_id, model: registry.getGraphNames().includes(run.model) ? run.model : undefined },
        "could not record the end of an Agent Protocol run",
      );
    }
  }

  /** Forgets the events of ended runs past their time or beyond the count kept. No timer: it runs as runs end. */
  #forgetEnded(): void {
    const oldest = Date.now() - (this.#options.retainEventsMs ?? 600_000);
    const most = this.#options.retainEventsOf ?? 1_000;
    for (const [runId, endedAt] of this.#ended) {
      if (this.#ended.size <= most && endedAt >= oldest) return;
      this.#ended.delete(runId);
      this.#live.delete(runId);
    }
  }

  async #setRun(live: LiveRun, status: AgentRunRecord["status"]): Promise<void> {
    live.record = { ...live.record, status, updated_at: now(), ...(live.cancelled === undefined ? {} : { cancel_reason: live.cancelled }) };
    await this.#backend("the thread records", () => this.#options.records.putRun(live.record));
  }

  #cancelLive(live: LiveRun, action: "interrupt" | "rollback"): void {
    live.cancelled = action;
    live.controller.abort(new Error(`The run was cancelled (${action}).`));
  }

  /** A run this process knows, live or recently ended, of this scope and thread. */
  live(scope: string, threadId: string, runId: string): LiveRun | undefined {
    const live = this.#live.get(runId);
    return live !== undefined && live.record.scope === scope && live.record.thread_id === threadId ? live : undefined;
  }

  /** Cancels a run; with `wait`, returns once it has ended. Unknown (or another tenant's): 404. */
  async cancel(
    scope: string,
    threadId: string,
    runId: string,
    options: { wait: boolean; action: "interrupt" | "rollback" },
  ): Promise<void> {
    const live = this.live(scope, threadId, runId);
    if (live === undefined) {
      const record = await this.#backend("the thread records", () => this.#options.records.getRun(scope, runId));
      if (record === undefined || record.thread_id !== threadId) throw new AgentNotFoundError("run", runId);
      if (record.status === "pending" || record.status === "running") {
        throw new AgentConflictError(
          "This run runs on another server process, which alone can cancel it; cancel it there, or wait for it to end.",
        );
      }
      return;
    }
    if (!live.events.finished) this.#cancelLive(live, options.action);
    if (options.wait) await live.done;
  }

  /** Waits for a run to end; its final values (or `{ __error__ }`), or undefined when this process does not hold its outcome. */
  async join(live: LiveRun): Promise<unknown> {
    await live.done;
    return live.result;
  }

  /**
   * Waits for a run another process runs (its record says when it has ended), polling the
   * records until it has ended or `signal` fires.
   */
  async awaitElsewhere(scope: string, runId: string, signal: AbortSignal): Promise<void> {
    for (;;) {
      const record = await this.#backend("the thread records", () => this.#options.records.getRun(scope, runId));
      if (record === undefined || (record.status !== "pending" && record.status !== "running") || signal.aborted) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, ELSEWHERE_POLL_MS);
        function done() {
          clearTimeout(timer);
          signal.removeEventListener("abort", done);
          resolve();
        }
        signal.addEventListener("abort", done, { once: true });
      });
    }
  }

  /** Ends every run (shutdown): they are cancelled and their records settled. */
  async close(): Promise<void> {
    const runs = [...this.#live.values()];
    for (const live of runs) if (!live.events.finished) this.#cancelLive(live, "interrupt");
    await Promise.all(runs.map((live) => live.done));
    this.#live.clear();
    this.#ended.clear();
  }
}
