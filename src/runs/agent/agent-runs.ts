import type { RunLease } from "../../coordination/run-coordinator.js";
import { AgentConflictError, AgentNotFoundError, BackendUnavailableError, ServerShuttingDownError } from "../../errors/catalogue.js";
import type { AgentRunRecord, AgentThreadRecord } from "../../store/agent-records.js";
import { anySignal } from "../../util/any-signal.js";
import { type AgentRunJob, JobCancelledError, JobLostError, type JobOutcome } from "../jobs.js";
import type { UsageCollector } from "../usage.js";
import { agentContext } from "./agent-context.js";
import type { AgentGraph } from "./agent-graph.js";
import { type AgentRunRequest, type Backend, backendCall, checkpointThreadId, newRunRecord, resolvedOf } from "./agent-run-config.js";
import {
  driveGraph,
  executionConfig,
  type LiveRun,
  prepareRun,
  reportedFailure,
  settleRun,
  takeoverPoint,
  turnOf,
} from "./agent-run-start.js";
import type { AgentRunsOptions } from "./agent-runs-options.js";
import { modelOfAssistant } from "./assistants.js";
import { MemoryProtocolLogs, type ProtocolLogs } from "./protocol-log.js";
import { protocolSink } from "./protocol-sink.js";
import { RunEvents } from "./run-events.js";
import {
  awaitCancelled,
  awaitRunEnd,
  enqueueRun,
  type JobRun,
  jobEvents,
  jobRecords,
  leaseWhenFree,
  othersActive,
  RUN_RESULT,
  sharedFollower,
  sharedResult,
} from "./shared-agent-runs.js";

const now = () => new Date().toISOString();

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
  /** Protocol v2's thread logs: the deployment's with a shared queue, else this process's. */
  readonly protocolLogs: ProtocolLogs;

  constructor(options: AgentRunsOptions) {
    this.#options = options;
    this.protocolLogs = options.shared?.protocolLogs ?? options.protocolLogs ?? new MemoryProtocolLogs();
  }

  readonly #call: Backend = (what, operation) => backendCall(what, this.#options.backendTimeoutMs, operation);

  /** The graph of an assistant as this surface runs it: on a checkpointer. */
  async graphOf(assistantId: string): Promise<{ model: string; graph: AgentGraph; contextOf: (sent: unknown) => unknown }> {
    const model = modelOfAssistant(this.#options.registry, assistantId);
    const resolved = await this.#options.registry.resolve(model);
    return { model, graph: resolved.onThreads() as unknown as AgentGraph, contextOf: (sent) => agentContext(resolved.config, sent) };
  }

  /** Creates a run and starts it (or queues it behind the thread's current run) in this process. */
  async start(
    scope: string,
    threadId: string | undefined,
    request: AgentRunRequest,
    /** Called once the run has ended (a concurrent-run slot given back). */
    onEnd?: () => Promise<void>,
  ): Promise<{ run: AgentRunRecord; events: RunEvents }> {
    const { model, graph, temporary, id, thread } = await prepareRun(this, this.#options.records, this.#call, scope, threadId, request);
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
      lease = (await this.#call("the run coordinator", () => coordinator.tryAcquire(`agent-thread:${key}`))) ?? undefined;
      if (lease === undefined) {
        throw new AgentConflictError(
          "This thread is running a run on another server process. Wait for it to finish (join it), then send this run again.",
        );
      }
    }
    const at = now();
    const record = newRunRecord(scope, id, request, temporary, at, resolvedOf(model, thread));
    try {
      await this.#call("the thread records", async () => {
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
    live.done = this.#execute(live, key, before, { model, graph, request, thread }, lease).then(
      () => onEnd?.().catch(() => {}),
      () => onEnd?.().catch(() => {}),
    );
    return { run: record, events: live.events };
  }

  /**
   * A run created in the background (`POST /threads/{id}/runs`, protocol v2's `run.start`): on the shared queue when the
   * deployment has one, so that any process works it, takes it over from a worker that died,
   * and serves its joins and cancels; otherwise run here, as `start` does.
   */
  async startInBackground(
    scope: string,
    threadId: string | undefined,
    request: AgentRunRequest,
    onEnd?: () => Promise<void>,
  ): Promise<AgentRunRecord> {
    const shared = this.#options.shared;
    if (shared === undefined) return (await this.start(scope, threadId, request, onEnd)).run;
    // Queued, the run holds no slot of this server's: it runs on whichever worker takes it.
    await onEnd?.().catch(() => {});
    const prepared = await prepareRun(this, this.#options.records, this.#call, scope, threadId, request);
    const coordinator = this.#options.registry.coordinatorOf(prepared.model);
    const deps = { records: this.#options.records, shared, backend: this.#call, coordinator };
    return enqueueRun(deps, { scope, request, ...prepared }, (runId, action) =>
      this.cancel(scope, prepared.id, runId, { wait: false, action }),
    );
  }

  /** Works a run the shared queue gave this process (a first start, or a takeover after `attempt - 1`). */
  async runJob(job: AgentRunJob, signal: AbortSignal, attempt: number): Promise<JobOutcome> {
    const { records } = this.#options;
    const [record, thread] = await jobRecords(job, attempt, records, this.#call);
    // Deleted, or ended (a cancel before it started ends here with its record).
    if (record === undefined || (record.status !== "pending" && record.status !== "running")) {
      // Or another deployment's (its records elsewhere, the same Redis and background.keyPrefix).
      if (record === undefined) this.#options.log?.warn({ runId: job.runId }, "a queued Agent Protocol run has no record here: dropped");
      return "done";
    }
    if (thread === undefined) {
      await this.#call("the thread records", () => records.deleteRun(job.scope, job.runId)).catch(() => {});
      return "done";
    }
    const request = job.request as unknown as AgentRunRequest;
    const { model, graph } = await this.graphOf(request.graphId ?? request.assistantId);
    const { writer, events } = await jobEvents(this.#options.shared, job.runId, {
      backend: this.#call,
      attempt,
      timeoutMs: this.#options.backendTimeoutMs,
      warn: (error) => this.#options.log?.warn({ err: error, runId: job.runId }, "could not log an Agent Protocol run's events"),
    });
    // Not one of this process's live runs: its joins, streams and cancels go through the shared
    // log and queue wherever they arrive, this process included.
    const live: LiveRun = { record, events, controller: this.#options.tracker.start(), done: Promise.resolve() };
    const key = `${job.scope}\u0000${job.threadId}`;
    const execution = this.#execute(live, key, [], { model, graph, request, thread }, undefined, { signal, attempt, writer });
    live.done = execution.then(() => {});
    return execution;
  }

  async #execute(
    live: LiveRun,
    key: string,
    before: LiveRun[],
    run: { model: string; graph: AgentGraph; request: AgentRunRequest; thread: AgentThreadRecord },
    /** The thread's lease, when `start` took it. */
    taken: RunLease | undefined,
    /** A run of the shared queue: its job's signal (a cancel, a lost lock) and its shared log. */
    job?: JobRun,
  ): Promise<JobOutcome> {
    const { record, events, controller } = live;
    const { request, graph } = run;
    const checkpointThread = checkpointThreadId(record.scope, record.thread_id);
    let lease: RunLease | null | undefined = taken;
    let usage: UsageCollector | undefined;
    let signal: ReturnType<typeof anySignal> | undefined;
    let status: AgentRunRecord["status"] = "success";
    let threadStatus: AgentThreadRecord["status"] = "idle";
    let failure: string | null = null;
    let outcome: JobOutcome = "done";
    const protocol =
      request.protocol === true ? protocolSink(this.protocolLogs.log(record.scope, record.thread_id), request.assistantId) : undefined;
    // A cancel from any process reaches the job's signal, with what it asked for.
    const jobAborted = () => {
      const reason = job?.signal.reason;
      if (reason instanceof JobCancelledError) live.cancelled = reason.action === "rollback" ? "rollback" : "interrupt";
      controller.abort(reason);
    };
    job?.signal.addEventListener("abort", jobAborted, { once: true });
    if (job?.signal.aborted === true) jobAborted();
    try {
      // Runs of one thread take turns: one starts when those before it have ended, and after its `after_seconds` here.
      await turnOf(before, job === undefined ? request.afterSeconds : undefined, controller.signal);
      const coordinator = this.#options.registry.coordinatorOf(run.model);
      if (job !== undefined) {
        const ttl = this.#options.shared?.leaseTtlMs;
        lease = await leaseWhenFree(coordinator, `agent-thread:${key}`, controller.signal, ttl, (what, operation) =>
          this.#call(what, operation),
        );
      } else if (lease === undefined) {
        lease = await this.#call("the run coordinator", () => coordinator.tryAcquire(`agent-thread:${key}`));
      }
      if (lease === null) throw new AgentConflictError("This thread is running a run on another server process.");
      const goesOn = await takeoverPoint(graph, checkpointThread, live.record, job?.attempt, this.#call);
      await this.#setRun(live, "running");
      live.startedAt = live.record.updated_at;
      protocol?.open();
      // A queued run's first metadata was logged when it was queued; a takeover says its attempt.
      if (job === undefined || job.attempt > 1) events.push("metadata", { run_id: record.run_id, attempt: job?.attempt ?? 1 });
      signal = anySignal([controller.signal, lease.signal]);
      const execution = await executionConfig(this.#options, { request, record, model: run.model, graph, checkpointThread, job, signal });
      usage = execution.usage;
      const config = execution.config;
      const ended = await driveGraph(graph, request, config, record.run_id, events, this.#call, goesOn, protocol);
      live.result = ended.result;
      if (ended.interrupted) threadStatus = "interrupted";
    } catch (error) {
      const reason = controller.signal.reason;
      if (job !== undefined && (reason instanceof JobLostError || reason instanceof ServerShuttingDownError)) {
        // Another worker goes on with it from its last step: its records and its log stay as they are.
        outcome = reason instanceof JobLostError ? "lost" : "handed-back";
      } else if (job !== undefined && !controller.signal.aborted && error instanceof BackendUnavailableError) {
        outcome = "handed-back"; // Postgres or Redis went away under it: it goes on from its last step once they are back.
      } else if (live.cancelled !== undefined || controller.signal.aborted) {
        status = "interrupted";
        threadStatus = "idle";
      } else {
        status = "error";
        threadStatus = "error";
        // What the client reads: chat-serve's own errors and a graph's UserFacingError as they
        // are, a provider's failure as a sentence of ours, anything else generic; the log has it all.
        const shown = reportedFailure(error, this.#options.showGraphErrors === true);
        failure = shown.message;
        live.result = { __error__: { error: shown.name, message: failure } };
        events.push("error", { error: shown.name, message: failure });
        if (!(error instanceof AgentConflictError))
          this.#options.log?.error({ err: error, runId: record.run_id, threadId: record.thread_id }, "an Agent Protocol run failed");
      }
    } finally {
      // A queued run's result goes in its log, for a `runs/wait` on any process.
      if (job !== undefined && outcome === "done") events.push(RUN_RESULT, live.result ?? null);
      events.finish();
      signal?.dispose();
      job?.signal.removeEventListener("abort", jobAborted);
      if (usage !== undefined) this.#options.onUsage?.(run.model, usage.usage());
      const queue = (this.#queues.get(key) ?? []).filter((other) => other !== live);
      if (queue.length === 0) this.#queues.delete(key);
      else this.#queues.set(key, queue);
      if (outcome === "done") {
        // A temporary thread goes with its run: whether it is busy asks nothing.
        const settle = async () => {
          const busy =
            queue.length > 0 || (job !== undefined && !record.temporary && (await othersActive(this.#options.records, this.#call, record)));
          return settleRun(this.#options.records, this.#call, record, live.cancelled, run.graph, { status, threadStatus, failure, busy });
        };
        live.record = await settle().catch((error: unknown) => {
          this.#options.log?.warn(
            { err: error, runId: record.run_id, model: run.model },
            "could not record the end of an Agent Protocol run",
          );
          // A queued run's end goes to another worker, which records it; one of this process's stays as it is.
          if (job !== undefined) outcome = "handed-back";
          return live.record;
        });
      }
      if (outcome !== "done") await job?.writer?.leave();
      else
        await Promise.resolve(job?.writer?.finish()).then(() => this.#options.onEnded?.(live.record, request, live.result, live.startedAt));
      // Its thread's log says how it ended once its records do (an answer to an interrupt finds the
      // thread interrupted); one that goes on elsewhere says nothing. Then the thread's next run may start.
      await (outcome === "done" ? protocol?.ended({ status, interrupted: threadStatus === "interrupted", failure }) : protocol?.leave());
      await lease?.release().catch(() => {});
      this.#ended.set(record.run_id, Date.now());
      this.#forgetEnded();
      // Ended once its end is recorded: a drain waits for that, before the backends close.
      this.#options.tracker.finish(controller);
    }
    return outcome;
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
    await this.#call("the thread records", () => this.#options.records.putRun(live.record));
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
      const record = await this.#call("the thread records", () => this.#options.records.getRun(scope, runId));
      if (record === undefined || record.thread_id !== threadId) throw new AgentNotFoundError("run", runId);
      if (record.status !== "pending" && record.status !== "running") return;
      // A run of the shared queue: the cancel reaches the worker that runs it, wherever it is.
      const shared = this.#options.shared;
      if (shared !== undefined && (await this.#call("the background queue", () => shared.queue.cancel(runId, options.action)))) {
        if (options.wait) await awaitCancelled(this, scope, runId, shared.leaseTtlMs);
        return;
      }
      throw new AgentConflictError(
        "This run streams to a client of another server process, which alone can cancel it; cancel it there, or wait for it to end.",
      );
    }
    if (!live.events.finished) this.#cancelLive(live, options.action);
    if (options.wait) await live.done;
  }

  /** Waits for a run to end; its final values (or `{ __error__ }`), or undefined when this process does not hold its outcome. */
  async join(live: LiveRun): Promise<unknown> {
    await live.done;
    return live.result;
  }

  /** Runs go on the deployment's shared queue (Redis and Postgres), so that any process serves them. */
  get shared(): boolean {
    return this.#options.shared !== undefined;
  }

  /** What a run of the shared queue ended with (`sharedResult`); undefined when `signal` fired first. */
  resultOf(run: AgentRunRecord, signal: AbortSignal): Promise<unknown> {
    return sharedResult(this.#options.shared!, this.#call, this.#options.records, run, signal);
  }

  /** A run of the shared queue as any process follows it (`sharedFollower`). */
  sharedEvents(run: AgentRunRecord, after: number | undefined): ReturnType<typeof sharedFollower> {
    return sharedFollower(this.#options.shared, this.#call, this.#options.records, run, after);
  }

  /**
   * Waits for a run this process does not hold to end, or for `signal`: to the end of its
   * shared log (a run of the shared queue, at once when it ends), else as its record says.
   */
  async awaitEnd(run: AgentRunRecord, signal: AbortSignal): Promise<void> {
    const shared = await this.sharedEvents(run, undefined);
    if (shared !== undefined) for await (const _event of shared.follow(shared.after, signal));
    // The record has the last word (a log that expired under a worker that died).
    if (!signal.aborted) await this.awaitElsewhere(run.scope, run.run_id, signal);
  }

  /** Waits for a run another process runs to end (its record says so), or for `signal`. */
  awaitElsewhere(scope: string, runId: string, signal: AbortSignal): Promise<void> {
    return awaitRunEnd(this.#options.records, this.#call, scope, runId, signal);
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
