import { setTimeout as sleep } from "node:timers/promises";
import { type ParsedResponsesRequest, parseResponsesRequest } from "../dialects/responses/parse-responses-request.js";
import { responseId } from "../dialects/responses/response-id.js";
import { ResponseRenderer } from "../dialects/responses/response-renderer.js";
import { planResponsesRun, type ResolvedRequest, saveResponse } from "../dialects/responses/responses-run.js";
import { storeCall } from "../dialects/responses/stored-context.js";
import { toStoredItems } from "../dialects/responses/stored-items.js";
import { InvalidRequestError, RunBusyError, ServerShuttingDownError } from "../errors/catalogue.js";
import { isChatServeError } from "../errors/serve-error.js";
import { toServeError } from "../errors/to-serve-error.js";
import { GraphFeature } from "../registry/features.js";
import type { GraphRegistry } from "../registry/graph-registry.js";
import type { LoggedEvent } from "../runs/agent/run-events.js";
import type { SharedAgentRuns } from "../runs/agent/shared-agent-runs.js";
import { resolveRunId } from "../runs/interrupts/checkpoint-key.js";
import type { BackgroundEventLog, EventsFrom } from "../runs/jobs.js";
import { type AgentRunJob, JobCancelledError, JobLostError, type JobOutcome } from "../runs/jobs.js";
import { type PreparedRun, prepareRun, type RunLogger } from "../runs/prepare-run.js";
import type { RunTracker } from "../runs/run-tracker.js";
import { streamRun } from "../runs/stream-run.js";
import type { ResponseRecord } from "../store/conversation-store.js";
import { anySignal } from "../util/any-signal.js";
import type { ResponseObject, ResponseStreamEvent } from "../wire/responses-response.js";
import type { BackgroundJob, BackgroundQueue } from "./job-queue.js";
import { planStart } from "./takeover.js";
import type { WebhookEventType, WebhookSender } from "./webhooks.js";

// A running response is saved at most this often, so a poll sees its output so far.
const SAVE_EVERY_MS = 1_000;

/** What background runs report, when metrics are on (the server's metrics have these). */
export interface BackgroundMetrics {
  /** A run started, after waiting in the queue. */
  backgroundStarted(model: string, waitSeconds: number): void;
  /** A run ended with a status. */
  backgroundEnded(model: string, status: string, runSeconds: number | undefined): void;
}

export interface BackgroundRunsOptions {
  registry: GraphRegistry;
  queue: BackgroundQueue;
  events: BackgroundEventLog;
  /** The runs in flight of this process: a drain waits for background runs too. */
  runs: RunTracker;
  backendTimeoutMs: number;
  /** How many background runs this process works at once. */
  concurrency: number;
  /**
   * The deployment has a durable checkpointer: every background run checkpoints each step, and
   * a worker that takes a run over goes on from the last step completed.
   */
  resumable?: boolean;
  /** How long a run taken over waits for its conversation's lease, which its dead worker held. */
  leaseWaitMs?: number;
  /** The run's leases expire this soon after its worker stops renewing them (the queue's takeover time). */
  leaseTtlMs?: number | undefined;
  log?: RunLogger & { error(object: Record<string, unknown>, message: string): void };
  /** The events of Agent Protocol runs on a shared queue (any process follows them). */
  agentEvents?: BackgroundEventLog<LoggedEvent>;
  /** Told when a background response ends (completed, incomplete, failed or cancelled). */
  webhooks?: WebhookSender;
  metrics?: BackgroundMetrics;
}

const ENDED: Record<string, WebhookEventType> = {
  completed: "response.completed",
  incomplete: "response.incomplete",
  failed: "response.failed",
  cancelled: "response.cancelled",
};

/** What runs a queued Agent Protocol run (the engine's `runJob`). */
export interface AgentJobRunner {
  runJob(job: AgentRunJob, signal: AbortSignal, attempt: number): Promise<JobOutcome>;
}

/** A background response as its submitter sees it: the stored response object (status `queued`). */
export interface Submitted {
  response: ResponseObject;
}

/**
 * Background responses: queued by a request, run by a worker of the queue (any process that
 * works it), saved as they go, their events logged so a client can reattach, cancellable from
 * any process. The run itself is the one every response runs: `prepareRun` and `streamRun`.
 */
export class BackgroundRuns {
  readonly #options: BackgroundRunsOptions;
  /** Who runs the Agent Protocol's queued runs here: the surface's engine, or one made for them. */
  #agentRunner: (() => Promise<AgentJobRunner>) | undefined;
  #agentRuns: Promise<AgentJobRunner> | undefined;

  constructor(options: BackgroundRunsOptions) {
    this.#options = options;
    options.queue.work(
      (job, signal, { attempt }) =>
        "kind" in job && job.kind === "agent-run"
          ? this.#runAgentJob(job, signal, attempt)
          : this.#execute(job as BackgroundJob, signal, attempt),
      options.concurrency,
    );
  }

  /** The shared queue and log, for the Agent Protocol's background runs; undefined on the embedded queue. */
  get sharedAgentRuns(): SharedAgentRuns | undefined {
    const { queue, agentEvents, leaseTtlMs } = this.#options;
    if (!queue.shared || agentEvents === undefined) return undefined;
    return { queue, events: agentEvents, ...(leaseTtlMs === undefined ? {} : { leaseTtlMs }) };
  }

  /** The engine that runs the Agent Protocol's queued runs in this process (the surface's, loaded when first needed). */
  handleAgentRuns(runner: () => Promise<AgentJobRunner>): void {
    this.#agentRunner = runner;
  }

  async #runAgentJob(job: AgentRunJob, signal: AbortSignal, attempt: number): Promise<JobOutcome> {
    this.#agentRuns ??= (this.#agentRunner ?? (() => this.#ownAgentRuns()))();
    try {
      return await (await this.#agentRuns).runJob(job, signal, attempt);
    } catch (error) {
      // Before it ran: its records or its model could not be read (it stays as its record says).
      this.#options.log?.error({ err: error, runId: job.runId }, "could not start a queued Agent Protocol run");
      return "done";
    }
  }

  /** On a process without the surface (`chat-serve worker`): an engine of its own, on the store's records. */
  async #ownAgentRuns(): Promise<AgentJobRunner> {
    const { AgentRuns } = await import("../runs/agent/agent-runs.js");
    const { registry, runs, backendTimeoutMs, log } = this.#options;
    const shared = this.sharedAgentRuns;
    return new AgentRuns({
      registry,
      records: registry.store.agentRecords,
      tracker: runs,
      backendTimeoutMs,
      ...(log === undefined ? {} : { log }),
      ...(shared === undefined ? {} : { shared }),
    });
  }

  /**
   * Queues a background response. Everything a client can get wrong is checked first, as for
   * a foreground request, so nothing is queued that cannot run; then the response is stored
   * `queued`, its `response.created` event logged, and the job enqueued.
   */
  async submit(parsed: ParsedResponsesRequest, job: Omit<BackgroundJob, "responseId" | "runId">): Promise<Submitted> {
    const { registry, backendTimeoutMs } = this.#options;
    if (parsed.body.store === false) {
      throw new InvalidRequestError("background responses are stored: remove store: false, or run in the foreground.", {
        param: "store",
      });
    }
    // An interrupt run's response id names its run, so a background pause can be answered too.
    const interrupts = registry.getGraph(parsed.body.model).features.has(GraphFeature.INTERRUPTS);
    const runId = parsed.resume?.runId ?? (interrupts ? resolveRunId(parsed.body.metadata?.graph_run_id) : undefined);
    const id = responseId(runId);
    // Checked now (stored ids, conversations, the input); the worker resolves them again when it starts.
    await planResponsesRun({ registry, backendTimeoutMs }, parsed, job.scope, id);
    const renderer = new ResponseRenderer(id, parsed.body, false, true, {
      background: true,
      ...(parsed.conversationId === undefined ? {} : { conversationId: parsed.conversationId }),
    });
    const created = renderer.queued();
    await this.#save(job.scope, parsed, renderer.response);
    const full: BackgroundJob = { ...job, responseId: id, queuedAt: Date.now(), ...(runId === undefined ? {} : { runId }) };
    try {
      if (parsed.body.stream === true) await storeCall(backendTimeoutMs, () => this.#options.events.append(id, created));
      await storeCall(backendTimeoutMs, () => this.#options.queue.enqueue(full));
    } catch (error) {
      // No worker will ever see it: the stored response says so rather than reading `queued` forever.
      renderer.fail(toServeError(error));
      await this.#save(job.scope, parsed, renderer.response).catch(() => {});
      throw error;
    }
    return { response: renderer.response };
  }

  /** Cancels a queued or running background response; false when no worker knows it (it has ended). */
  cancel(responseId: string): Promise<boolean> {
    return this.#options.queue.cancel(responseId);
  }

  /** The logged events of a response after `after`, then the live ones until it ends. */
  events(responseId: string, after: number, signal: AbortSignal): Promise<EventsFrom> {
    return this.#options.events.from(responseId, after, signal);
  }

  /** The sequence number of a response's last logged event (-1: none). */
  lastEvent(responseId: string): Promise<number> {
    return this.#options.events.last(responseId);
  }

  /** Starts no more jobs: those waiting end failed (the server is stopping); those running go on. */
  drain(): void {
    this.#options.queue.stop(new ServerShuttingDownError());
  }

  /** Stops taking jobs; the runs in flight go on (the server's drain waits for them). */
  async close(): Promise<void> {
    await this.#options.queue.close();
    await this.#options.events.close();
  }

  /** Stores the response as it stands, without its conversation's items (those come at the end). */
  async #save(scope: string, parsed: ParsedResponsesRequest, response: ResponseObject): Promise<void> {
    const record: ResponseRecord = {
      id: response.id,
      scope,
      model: response.model,
      createdAt: new Date(response.created_at * 1000),
      response: structuredClone(response) as unknown as Record<string, unknown>,
      inputItems: toStoredItems(parsed.items),
      ...(parsed.body.previous_response_id == null ? {} : { previousResponseId: parsed.body.previous_response_id }),
      ...(parsed.conversationId === undefined ? {} : { conversationId: parsed.conversationId }),
    };
    await storeCall(this.#options.backendTimeoutMs, () => this.#options.registry.store.saveResponse(record));
  }

  /**
   * Runs one background response: to its end (completed, incomplete, failed or cancelled), or
   * until this worker hands it back (stopping) or loses it (another worker has its lock).
   * Never throws.
   */
  async #execute(job: BackgroundJob, jobSignal: AbortSignal, attempt: number): Promise<JobOutcome> {
    const { registry, backendTimeoutMs, events, queue } = this.#options;
    const tracked = this.#options.runs.start();
    const signal = anySignal([jobSignal, tracked.signal]);
    const parsed = parseResponsesRequest(job.body);
    const streaming = parsed.body.stream === true;
    const renderer = new ResponseRenderer(job.responseId, parsed.body, false, true, {
      background: true,
      ...(parsed.conversationId === undefined ? {} : { conversationId: parsed.conversationId }),
    });
    // Events go to the log in order; a log that fails loses events, never the run.
    let logging = Promise.resolve();
    let logFailed = false;
    const emit = (produced: ResponseStreamEvent[]) => {
      if (!streaming || produced.length === 0) return;
      logging = logging
        .then(() => events.append(job.responseId, produced))
        .catch((error: unknown) => {
          if (!logFailed) this.#options.log?.warn({ err: error, response: job.responseId }, "could not log a background response's events");
          logFailed = true;
        });
    };
    const config = registry.getGraph(parsed.body.model);
    const start = planStart(config, job.responseId, attempt, this.#options.resumable === true);
    let run: PreparedRun | undefined;
    let startedAt: number | undefined;
    let outcome: JobOutcome = "done";
    // Runs another worker goes on with: a lost job, or one handed back at the end of the grace.
    const handsBack = (reason: unknown) =>
      reason instanceof JobLostError ||
      (reason instanceof ServerShuttingDownError &&
        queue.shared &&
        start.kind === "run" &&
        (start.durable !== undefined || config.background.retry));
    // Told as the signal fires, before the run unwinds: what another worker goes on from stays.
    const keep = () => {
      if (handsBack(signal.signal.reason)) run?.interrupt?.keep();
    };
    signal.signal.addEventListener("abort", keep, { once: true });
    try {
      if (signal.signal.aborted) throw signal.signal.reason;
      startedAt = Date.now();
      if (job.queuedAt !== undefined && attempt === 1) {
        this.#options.metrics?.backgroundStarted(parsed.body.model, (startedAt - job.queuedAt) / 1000);
      }
      // A run taken over numbers its events after those its first worker logged.
      emit(renderer.started(streaming ? (await storeCall(backendTimeoutMs, () => events.last(job.responseId))) + 1 : 1));
      await this.#save(job.scope, parsed, renderer.response);
      if (start.kind === "fail") throw start.error;
      const resolved: ResolvedRequest = await planResponsesRun({ registry, backendTimeoutMs }, parsed, job.scope, job.responseId);
      const engine =
        job.runId === undefined || parsed.resume !== undefined
          ? resolved.engine
          : { ...resolved.engine, metadata: { ...resolved.engine.metadata, graph_run_id: job.runId } };
      run = await this.#prepare(engine, job, signal.signal, resolved, parsed, start.durable, attempt);
      const prepared = run;
      // A background response's renderer is made before its run: the run says whether events go out.
      renderer.clientEvents = run.clientEvents;
      let saved = Date.now();
      for await (const event of streamRun(prepared)) {
        const produced = renderer.render(event);
        if (event.kind === "final") await saveResponse({ registry, backendTimeoutMs }, parsed, resolved, prepared, renderer);
        emit(produced);
        if (event.kind !== "final" && Date.now() - saved >= SAVE_EVERY_MS) {
          saved = Date.now();
          await this.#save(job.scope, parsed, renderer.response);
        }
      }
    } catch (error) {
      const reason = signal.signal.aborted ? signal.signal.reason : undefined;
      if (reason instanceof JobLostError) {
        // Another worker has the run now: it says how the run ends.
        outcome = "lost";
      } else if (handsBack(reason)) {
        // Out of shutdown grace: another worker takes the run over.
        outcome = "handed-back";
      } else {
        if (reason instanceof JobCancelledError) {
          renderer.cancel();
        } else {
          const failure = toServeError(reason ?? error);
          if (failure.status >= 500) this.#options.log?.error({ err: error, response: job.responseId }, "a background response failed");
          emit(renderer.fail(failure));
        }
        await this.#save(job.scope, parsed, renderer.response).catch((saveError: unknown) =>
          this.#options.log?.error({ err: saveError, response: job.responseId }, "could not store how a background response ended"),
        );
      }
    } finally {
      if (outcome === "done") {
        const ended = ENDED[renderer.response.status];
        if (ended !== undefined) this.#options.webhooks?.responseEnded(ended, job.responseId);
        this.#options.metrics?.backgroundEnded(
          parsed.body.model,
          renderer.response.status,
          startedAt === undefined ? undefined : (Date.now() - startedAt) / 1000,
        );
        await logging;
        if (streaming) await storeCall(backendTimeoutMs, () => events.finish(job.responseId)).catch(() => {});
      }
      await logging;
      signal.signal.removeEventListener("abort", keep);
      signal.dispose();
      await run?.release({ keepThread: outcome !== "done" });
      this.#options.runs.finish(tracked);
    }
    return outcome;
  }

  /**
   * Prepares the run. A run taken over waits for its conversation's lease, which the worker
   * that died may hold until the lease expires.
   */
  async #prepare(
    engine: ResolvedRequest["engine"],
    job: BackgroundJob,
    signal: AbortSignal,
    resolved: ResolvedRequest,
    parsed: ParsedResponsesRequest,
    durable: { threadId: string; resume: boolean } | undefined,
    attempt: number,
  ): Promise<PreparedRun> {
    const { registry, backendTimeoutMs } = this.#options;
    const waitUntil = Date.now() + (attempt > 1 ? (this.#options.leaseWaitMs ?? 35_000) : 0);
    for (;;) {
      try {
        return await prepareRun(registry, engine, {
          requestId: job.requestId,
          signal,
          ...(this.#options.log === undefined ? {} : { log: this.#options.log }),
          backendTimeoutMs,
          ...(this.#options.leaseTtlMs === undefined ? {} : { leaseTtlMs: this.#options.leaseTtlMs }),
          scope: async () => job.scope,
          caller: { tenant: job.tenant },
          ...(parsed.resume === undefined ? {} : { resumeOf: parsed.resume }),
          ...(resolved.context.thread === undefined ? {} : { thread: resolved.context.thread }),
          ...(durable === undefined ? {} : { durable }),
        });
      } catch (error) {
        if (!isChatServeError(error, RunBusyError) || Date.now() >= waitUntil || signal.aborted) throw error;
        await sleep(500, undefined, { signal }).catch(() => {});
      }
    }
  }
}
