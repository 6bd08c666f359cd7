import { setTimeout } from "node:timers/promises";
import type { ParsedResponsesRequest } from "../dialects/responses/parse-responses-request.js";
import { BackendUnavailableError, ServerShuttingDownError } from "../errors/catalogue.js";
import type { GraphRegistry } from "../registry/graph-registry.js";
import type { ProtocolLogs } from "../runs/agent/protocol-log.js";
import type { LoggedEvent } from "../runs/agent/run-events.js";
import type { SharedAgentRuns } from "../runs/agent/shared-agent-runs.js";
import type { AgentCronJob, AgentRunJob, BackgroundEventLog, EventsFrom, JobOutcome } from "../runs/jobs.js";
import type { RunLogger } from "../runs/prepare-run.js";
import type { RunTracker } from "../runs/run-tracker.js";
import type { ResponseObject } from "../wire/responses-response.js";
import type { BackgroundJob, BackgroundQueue } from "./job-queue.js";
import type { RedisSessions } from "./redis-sessions.js";
import type { RunWebhooks } from "./run-webhooks.js";
import type { WebhookSender } from "./webhooks.js";

/** How long a queued run whose backends did not answer waits before it goes back on the queue. */
const RETRY_AFTER_BACKEND_MS = 1_000;

// The run engine (and the Responses dialect) load with the first background response
// (response-jobs.ts), not with the server: a server that runs none pays nothing for them at
// start. Once loaded, a job starts in the turn it is handed over, as a drain expects.
let loaded: typeof import("./response-jobs.js") | undefined;

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
  /** Protocol v2's thread logs on a shared queue (any process follows them). */
  protocolLogs?: ProtocolLogs;
  /** Told when a background response ends (completed, incomplete, failed or cancelled). */
  webhooks?: WebhookSender;
  /** On a process without the Agent Protocol's surface: where a queued run's `webhook` is sent from. */
  runWebhooks?: RunWebhooks;
  metrics?: BackgroundMetrics;
}

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
  /** The engine made here for queued runs when no surface gave one (closed with the queue). */
  #ownEngine: Promise<AgentJobRunner & { close(): Promise<void> }> | undefined;

  constructor(options: BackgroundRunsOptions) {
    this.#options = options;
  }

  /**
   * Starts working the queue: called once the surfaces have said who runs their jobs
   * (`handleAgentRuns`, `handleAgentCrons`), so that a run or firing waiting in the queue when
   * the process starts is taken by the surface's engine (its webhooks, its metrics), never by a
   * stand-in made before the surface was there.
   */
  start(): void {
    const { queue, concurrency } = this.#options;
    queue.work((job, signal, { attempt, due }) => {
      if ("kind" in job && job.kind === "agent-cron") return this.#fireCron(job, signal, due);
      return "kind" in job && job.kind === "agent-run"
        ? this.#runAgentJob(job, signal, attempt)
        : this.#execute(job as BackgroundJob, signal, attempt);
    }, concurrency);
  }

  /** What fires the Agent Protocol's crons here (its run goes on the queue as every run does). */
  #cronHandler: ((job: AgentCronJob, due?: number) => Promise<void>) | undefined;

  /** The Agent Protocol's crons fire through this handler when the shared queue gives this process a firing (`due`: when it was to). */
  handleAgentCrons(handler: (job: AgentCronJob, due?: number) => Promise<void>): void {
    this.#cronHandler = handler;
  }

  async #fireCron(job: AgentCronJob, signal: AbortSignal, due: number | undefined): Promise<JobOutcome> {
    if (this.#cronHandler === undefined) {
      // No Agent Protocol here (`chat-serve worker`): the firing goes back, a moment later, for a server to fire.
      await setTimeout(RETRY_AFTER_BACKEND_MS, undefined, { signal }).catch(() => {});
      return "handed-back";
    }
    // A firing's failure is the firing's: logged, and the cron fires again on its schedule.
    await this.#cronHandler(job, due).catch((error: unknown) =>
      this.#options.log?.error({ err: error, cronId: job.cronId }, "a cron could not make its run"),
    );
    return "done";
  }

  /** The shared queue and log, for the Agent Protocol's background runs; undefined on the embedded queue. */
  get sharedAgentRuns(): SharedAgentRuns | undefined {
    const { queue, agentEvents, protocolLogs, leaseTtlMs } = this.#options;
    if (!queue.shared || agentEvents === undefined || protocolLogs === undefined) return undefined;
    return { queue, events: agentEvents, protocolLogs, ...(leaseTtlMs === undefined ? {} : { leaseTtlMs }) };
  }

  /** Sessions every process shares (MCP's), on a shared queue; undefined on the embedded one. */
  get sharedSessions(): RedisSessions | undefined {
    return this.#options.queue.shared ? this.#options.queue.sessions : undefined;
  }

  /** The engine that runs the Agent Protocol's queued runs in this process (the surface's, loaded when first needed). */
  handleAgentRuns(runner: () => Promise<AgentJobRunner>): void {
    this.#agentRunner = runner;
  }

  async #runAgentJob(job: AgentRunJob, signal: AbortSignal, attempt: number): Promise<JobOutcome> {
    if (this.#agentRuns === undefined) {
      if (this.#agentRunner === undefined) this.#ownEngine = this.#ownAgentRuns();
      this.#agentRuns = this.#ownEngine ?? this.#agentRunner!();
    }
    try {
      const outcome = await (await this.#agentRuns).runJob(job, signal, attempt);
      // Handed back while the server goes on: a backend failed under it, and it is tried again a moment later.
      if (outcome === "handed-back" && !signal.aborted) await setTimeout(RETRY_AFTER_BACKEND_MS, undefined, { signal }).catch(() => {});
      return outcome;
    } catch (error) {
      // Before it ran: a backend did not answer (Redis or Postgres down, stalled, failing over).
      // The run goes back on the queue, a moment later, for this worker or another to start
      // once the backend is back: a queued run is never lost to an outage.
      if (error instanceof BackendUnavailableError && !signal.aborted) {
        this.#options.log?.warn({ err: error, runId: job.runId }, "a queued Agent Protocol run waits for its backends");
        await setTimeout(RETRY_AFTER_BACKEND_MS, undefined, { signal }).catch(() => {});
        return "handed-back";
      }
      // Its model is gone (a config change): it stays as its record says.
      this.#options.log?.error({ err: error, runId: job.runId }, "could not start a queued Agent Protocol run");
      return "done";
    }
  }

  /** On a process without the surface (`chat-serve worker`): an engine of its own, on the store's records. */
  async #ownAgentRuns(): Promise<AgentJobRunner & { close(): Promise<void> }> {
    const { AgentRuns } = await import("../runs/agent/agent-runs.js");
    const { registry, runs, backendTimeoutMs, log, runWebhooks } = this.#options;
    const shared = this.sharedAgentRuns;
    return new AgentRuns({
      registry,
      records: registry.store.agentRecords,
      tracker: runs,
      backendTimeoutMs,
      ...(log === undefined ? {} : { log }),
      ...(shared === undefined ? {} : { shared }),
      // A run that asked for a webhook is sent to it from here, as the surface would.
      ...(runWebhooks === undefined
        ? {}
        : {
            onEnded: (run, request, result, startedAt) => {
              if (request.webhook !== undefined) runWebhooks.send(request.webhook, run, result, startedAt);
            },
          }),
    });
  }

  /**
   * Queues a background response. Everything a client can get wrong is checked first, as for
   * a foreground request, so nothing is queued that cannot run; then the response is stored
   * `queued`, its `response.created` event logged, and the job enqueued.
   */
  async submit(parsed: ParsedResponsesRequest, job: Omit<BackgroundJob, "responseId" | "runId">): Promise<Submitted> {
    loaded ??= await import("./response-jobs.js");
    const { submitResponse } = loaded;
    return submitResponse(this.#options, parsed, job);
  }

  /** Runs one background response to its end (response-jobs.ts); never throws. */
  async #execute(job: BackgroundJob, signal: AbortSignal, attempt: number): Promise<JobOutcome> {
    // Tracked from the hand-over: a drain waits for it even while its module loads.
    const tracked = this.#options.runs.start();
    try {
      loaded ??= await import("./response-jobs.js");
      const { executeResponse } = loaded;
      return await executeResponse(this.#options, job, signal, attempt, tracked);
    } finally {
      this.#options.runs.finish(tracked);
    }
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
    await (await this.#ownEngine?.catch(() => undefined))?.close();
  }
}
