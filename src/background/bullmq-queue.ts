import { type Job, Queue, WaitingError, Worker } from "bullmq";
import { Redis } from "ioredis";
import type { LoggedEvent } from "../runs/agent/run-events.js";
import { type AgentCronJob, type CronRepeat, JobCancelledError, JobLostError, type JobOutcome } from "../runs/jobs.js";
import { withDeadline } from "../util/deadline.js";
import { type BackgroundQueue, type JobHandler, jobIdOf, type QueuedJob } from "./job-queue.js";
import { RedisEventLog } from "./redis-event-log.js";
import { RedisProtocolLogs } from "./redis-protocol-logs.js";
import { RedisSessions } from "./redis-sessions.js";

/** The reasons this queue gives BullMQ's cancel, read back from a processor's signal. */
const CANCELLED = "chat-serve:cancelled";
const LOST = "chat-serve:lost";
/** A cancel marker outlives any wait in the queue. */
const MARKER_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * How many times BullMQ may find a job stalled before failing it itself. Higher than the
 * attempts the runs allow, so the runs, not the engine, say how a run that kept losing its
 * worker ends.
 */
const MAX_STALLED = 20;

export interface SharedBackgroundOptions {
  /** The Redis URL (the coordinator's). */
  url: string;
  /** Namespaces every key: the queue, the event logs, the cancel channel. Default `chat-serve`. */
  keyPrefix?: string;
  /** A worker silent this long (killed, frozen, cut off) loses its runs to another worker. */
  takeoverAfterMs: number;
  /** Deadline of each call a request waits on. */
  timeoutMs: number;
  /** How long the events of an ended response can still be replayed. */
  eventRetentionMs?: number;
  log?: { warn(object: Record<string, unknown>, message: string): void };
}

/**
 * Background jobs on BullMQ over the coordinator's Redis: any process of the deployment
 * queues, works, and cancels them. BullMQ holds each running job under a lock its worker
 * renews; a worker that dies stops renewing, and the stalled-job check of the other workers
 * puts its job back in the queue. A cancel reaches the worker running the job on a Redis
 * channel (and, for a job that has not started, a marker its worker reads first).
 */
export class BullmqQueue implements BackgroundQueue {
  readonly shared = true;
  readonly events: RedisEventLog;
  /** The events of Agent Protocol runs, for a join or a reconnect on any process. */
  readonly agentEvents: RedisEventLog<LoggedEvent>;
  /** Protocol v2's thread logs, for a command or a stream on any process. */
  readonly protocolLogs: RedisProtocolLogs;
  readonly sessions: RedisSessions;
  readonly #options: SharedBackgroundOptions;
  readonly #prefix: string;
  /** Commands that fail at once when Redis is away (never queued behind a reconnect). */
  readonly #client: Redis;
  readonly #queue: Queue;
  readonly #subscriber: Redis;
  #worker: Worker | undefined;
  #handler: JobHandler | undefined;
  #closed = false;
  /**
   * Every connection of the queue (BullMQ's own included: it copies these options) retries a
   * lost Redis until the queue closes, then gives up, so a close never waits on a Redis that
   * is gone and leaves no reconnect timer behind.
   */
  readonly #retry = (attempt: number): number | null => (this.#closed ? null : Math.min(2_000, attempt * 100));
  #stopping: Promise<void> | undefined;
  /** Jobs this process runs right now (their handlers), and the last count of those waiting. */
  readonly #running = new Set<Promise<unknown>>();
  #waiting = 0;

  constructor(options: SharedBackgroundOptions) {
    this.#options = options;
    this.#prefix = options.keyPrefix ?? "chat-serve";
    this.#client = new Redis(options.url, {
      retryStrategy: this.#retry,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectionName: "chat-serve-background",
      lazyConnect: false,
    });
    this.#client.on("error", () => {});
    this.#queue = new Queue("background", { connection: this.#client, prefix: this.#prefix });
    this.#queue.on("error", (error) => options.log?.warn({ err: error }, "the background queue lost its connection to Redis"));
    this.events = new RedisEventLog({
      redis: this.#client,
      keyPrefix: this.#prefix,
      timeoutMs: options.timeoutMs,
      ...(options.eventRetentionMs === undefined ? {} : { retainMs: options.eventRetentionMs }),
    });
    this.agentEvents = new RedisEventLog<LoggedEvent>({
      redis: this.#client,
      keyPrefix: this.#prefix,
      stream: "agent-run-events",
      sequenceOf: (event) => event.id,
      timeoutMs: options.timeoutMs,
      ...(options.eventRetentionMs === undefined ? {} : { retainMs: options.eventRetentionMs }),
    });
    this.protocolLogs = new RedisProtocolLogs({
      redis: this.#client,
      keyPrefix: this.#prefix,
      timeoutMs: options.timeoutMs,
      warn: (error) => options.log?.warn({ err: error }, "could not log a protocol run's events"),
    });
    this.sessions = new RedisSessions({
      redis: this.#client,
      keyPrefix: this.#prefix,
      timeoutMs: options.timeoutMs,
      warn: (error) => options.log?.warn({ err: error }, "could not listen for the shared sessions' messages"),
    });
    this.#subscriber = new Redis(options.url, {
      connectionName: "chat-serve-background-cancel",
      maxRetriesPerRequest: null,
      retryStrategy: this.#retry,
    });
    this.#subscriber.on("error", () => {});
    // A message is the job's id, and after a NUL what the canceller asked for (an Agent Protocol `rollback`).
    this.#subscriber.on("message", (_channel: string, message: string) => {
      const [id, action] = message.split("\u0000");
      this.#worker?.cancelJob(id!, action === undefined ? CANCELLED : `${CANCELLED}:${action}`);
    });
    // Listening from the start, before any worker: subscribed only once the worker was made
    // (after the server's surfaces), one of two queues in a process was seen to miss every cancel.
    void this.#subscriber.subscribe(this.#channel).catch((error: unknown) => {
      this.#options.log?.warn({ err: error }, "could not listen for background cancels");
    });
  }

  get #channel(): string {
    return `${this.#prefix}:background-cancel`;
  }

  #marker(responseId: string): string {
    return `${this.#prefix}:background-cancelled:${responseId}`;
  }

  #call<T>(what: string, operation: Promise<T>): Promise<T> {
    return withDeadline(what, this.#options.timeoutMs, operation);
  }

  /** Answers once Redis does (for the start-time check). */
  async check(): Promise<void> {
    await this.#call("the background queue", this.#client.ping());
  }

  async enqueue(job: QueuedJob): Promise<void> {
    await this.#call(
      "the background queue",
      this.#queue.add("kind" in job ? job.kind : "response", job, {
        jobId: jobIdOf(job),
        // A delayed run (`after_seconds`) waits in Redis: any process starts it then, after a restart too.
        ...("delayMs" in job && job.delayMs !== undefined && job.delayMs > 0 ? { delay: job.delayMs } : {}),
        attempts: 1,
        removeOnComplete: { age: 3_600, count: 10_000 },
        removeOnFail: { age: 24 * 3_600 },
      }),
    );
  }

  /**
   * A cron's firings, as a BullMQ job scheduler: Redis holds the schedule, so each firing is one
   * job across every process, and a firing due while every process was down runs once one is back.
   */
  async schedule(cronId: string, repeat: CronRepeat, job: AgentCronJob): Promise<void> {
    await this.#call(
      "the background queue",
      this.#queue.upsertJobScheduler(`agent-cron:${cronId}`, repeat, {
        name: "agent-cron",
        data: job,
        opts: { attempts: 1, removeOnComplete: { age: 3_600, count: 1_000 }, removeOnFail: { age: 24 * 3_600 } },
      }),
    );
  }

  async unschedule(cronId: string): Promise<void> {
    await this.#call("the background queue", this.#queue.removeJobScheduler(`agent-cron:${cronId}`));
  }

  async cancel(responseId: string, action?: string): Promise<boolean> {
    const job = await this.#call("the background queue", this.#queue.getJob(responseId));
    if (job === undefined) return false;
    const state = await this.#call("the background queue", job.getState());
    if (state === "completed" || state === "failed" || state === "unknown") return false;
    // The marker first: a worker that takes the job from now on reads it before it starts.
    await this.#call("the background queue", this.#client.set(this.#marker(responseId), action ?? "1", "PX", MARKER_TTL_MS));
    if (state !== "active") {
      const removed = await job.remove().then(
        () => true,
        () => false,
      );
      if (removed) {
        // It never started: its cancel runs here, with the signal fired, so the response ends
        // `cancelled` the one way every cancel ends it.
        this.#run(job.data as QueuedJob, new JobCancelledError(action), 1);
        return true;
      }
    }
    await this.#call(
      "the background queue",
      this.#client.publish(this.#channel, action === undefined ? responseId : `${responseId}\u0000${action}`),
    );
    return true;
  }

  work(handler: JobHandler, concurrency: number): void {
    this.#handler = handler;
    const half = Math.max(500, Math.floor(this.#options.takeoverAfterMs / 2));
    const worker = new Worker("background", (job: Job, token?: string, signal?: AbortSignal) => this.#process(job, token, signal), {
      connection: {
        url: this.#options.url,
        maxRetriesPerRequest: null,
        connectionName: "chat-serve-background-worker",
        retryStrategy: this.#retry,
      },
      prefix: this.#prefix,
      concurrency: Math.max(1, concurrency),
      // The lock lasts half the takeover time and is renewed well within it; the stalled check
      // runs every half as well, so a dead worker's job is back in the queue within the takeover time.
      lockDuration: half,
      stalledInterval: half,
      maxStalledCount: MAX_STALLED,
    });
    worker.on("error", (error) => this.#options.log?.warn({ err: error }, "the background worker had an error with Redis"));
    // A lock this worker could not renew may be another worker's now: this run stops.
    worker.on("lockRenewalFailed", (ids) => {
      for (const id of ids) worker.cancelJob(id, LOST);
    });
    this.#worker = worker;
  }

  async #process(job: Job, token: string | undefined, signal: AbortSignal | undefined): Promise<void> {
    const controller = new AbortController();
    const cancelledWith = (reason: unknown) =>
      new JobCancelledError(
        typeof reason === "string" && reason.startsWith(`${CANCELLED}:`) ? reason.slice(CANCELLED.length + 1) : undefined,
      );
    const forward = () => controller.abort(signal?.reason === LOST ? new JobLostError() : cancelledWith(signal?.reason));
    signal?.addEventListener("abort", forward, { once: true });
    if (signal?.aborted) forward();
    try {
      // A cancel that came as the job was taken (its mark), read while the job starts: it stops
      // the job as any cancel does, without a round trip before every job.
      void this.#call("the background queue", this.#client.get(this.#marker(job.id!))).then(
        (marked) => {
          if (marked !== null) controller.abort(new JobCancelledError(marked === "1" ? undefined : marked));
        },
        () => {},
      );
      const outcome = await this.#track(
        this.#handler!(job.data as QueuedJob, controller.signal, {
          attempt: Math.max(1, job.attemptsStarted),
          due: job.timestamp + (job.opts.delay ?? 0),
        }),
      );
      if (outcome === "handed-back") {
        // Back in the queue, for another worker to take over from the run's last step.
        await job.moveToWait(token);
        throw new WaitingError();
      }
    } finally {
      signal?.removeEventListener("abort", forward);
    }
  }

  #track(run: Promise<JobOutcome>): Promise<JobOutcome> {
    this.#running.add(run);
    const untrack = () => this.#running.delete(run);
    run.then(untrack, untrack);
    return run;
  }

  /** Runs a job's handler here, outside the worker, with its signal fired (a cancel before it started). */
  #run(job: QueuedJob, abortWith: Error, attempt: number): void {
    const handler = this.#handler;
    if (handler === undefined) return;
    const controller = new AbortController();
    controller.abort(abortWith);
    void this.#track(handler(job, controller.signal, { attempt })).catch(() => {});
  }

  counts(): { waiting: number; running: number } {
    // The waiting count is the deployment's, read in the background for the next scrape.
    void this.#call("the background queue", this.#queue.getWaitingCount()).then(
      (waiting) => (this.#waiting = waiting),
      () => {},
    );
    return { waiting: this.#waiting, running: this.#running.size };
  }

  /** Takes no more jobs; those waiting stay for the other workers; those running go on. */
  stop(): void {
    this.#stopping ??= this.#worker?.close() ?? Promise.resolve();
  }

  /**
   * Closes the worker (the runs have ended by now), the queue and the connections. Each close
   * that gets no answer from Redis within the deadline is cut short: its connection goes.
   */
  async close(): Promise<void> {
    this.#closed = true;
    this.stop();
    const closing = async (what: Promise<unknown>, force: () => Promise<void> | undefined) => {
      await this.#call("the background queue", what).catch(() =>
        this.#call("the background queue", Promise.resolve(force())).catch(() => {}),
      );
    };
    await closing(this.#stopping!, () => this.#worker?.disconnect());
    await this.events.close();
    await this.agentEvents.close();
    this.protocolLogs.close();
    this.sessions.close();
    await closing(this.#queue.close(), () => this.#queue.disconnect());
    this.#subscriber.disconnect();
    this.#client.disconnect();
  }
}
