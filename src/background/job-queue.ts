import { type AgentCronJob, type AgentRunJob, JobCancelledError, type JobOutcome } from "../runs/jobs.js";
import type { RunCaller } from "../settings/runtime-context.js";
import type { RedisSessions } from "./redis-sessions.js";

/** What a background job carries: enough for any worker to run it, nothing of the HTTP request. */
export interface BackgroundJob {
  /** The response the job answers (also the job's id). */
  responseId: string;
  /** The server-trusted scope (tenant) of the request. */
  scope: string;
  tenant?: string;
  /** The user a project's LangGraph `Auth` said is calling: the run's graph reads it as on any other surface. */
  authUser?: RunCaller["authUser"];
  /** The scope of the store the graph reads, when it is not `scope` (a project's `Auth` users share `default`). */
  storeScope?: string;
  /** The request id of the POST that queued it, for the logs. */
  requestId: string;
  /** For an interrupt graph: the run the response names (its id carries it). */
  runId?: string;
  /** When it was queued (ms since the epoch), for the queue-wait metric. */
  queuedAt?: number;
  /** The Responses request body, as the client sent it. */
  body: Record<string, unknown>;
}

/** Whatever the queue carries: a background response, or an Agent Protocol run. */
export type QueuedJob = BackgroundJob | AgentRunJob | AgentCronJob;

/** A job's id in the queue (the response's id, the run's, or the cron's). */
export function jobIdOf(job: QueuedJob): string {
  if ("kind" in job && job.kind === "agent-cron") return `agent-cron:${job.cronId}`;
  return "kind" in job && job.kind === "agent-run" ? job.runId : (job as BackgroundJob).responseId;
}

/** Which start of a job this is: 1 for the first; more after a worker stopped or died while running it. */
export interface JobAttempt {
  attempt: number;
  /** When the job was to start (ms since the epoch), where the queue knows: a cron's firing on the shared queue. */
  due?: number;
}

/** Runs one job; the signal fires when the job is cancelled, handed back or lost. */
export type JobHandler = (job: QueuedJob, signal: AbortSignal, attempt: JobAttempt) => Promise<JobOutcome>;

/** Where background jobs wait for a worker, and how a cancel reaches the one running a job. */
export interface BackgroundQueue {
  /** Adds a job; it runs once, on one worker. */
  enqueue(job: QueuedJob): Promise<void>;
  /**
   * Cancels a job: one that waits never starts (true), one that runs has its signal fired
   * (true); false when the queue knows no such job (it has ended). `id`: `jobIdOf(job)`;
   * `action` reaches the job's handler as the `JobCancelledError`'s.
   */
  cancel(id: string, action?: string): Promise<boolean>;
  /** Starts working jobs with the handler, at most `concurrency` at a time. */
  work(handler: JobHandler, concurrency: number): void;
  /** How many jobs wait and run right now. */
  counts(): { waiting: number; running: number };
  /**
   * Whether a job this worker stops running can go back to the queue for another worker
   * (a shared queue), rather than end with the process (the embedded one).
   */
  readonly shared: boolean;
  /** Sessions every process of the deployment shares (MCP's), on a shared queue's Redis. */
  readonly sessions?: RedisSessions;
  /**
   * Starts no more jobs here. The embedded queue runs the handler of each job still waiting at
   * once with the signal fired by `reason` (no other worker will ever take them); a shared
   * queue leaves them to the other workers.
   */
  stop(reason: Error): void;
  /** Stops taking jobs; those running go on (`drain` waits for them). */
  close(): Promise<void>;
}

/**
 * The embedded queue: jobs in this process's memory, worked by this process. No service, the
 * same semantics as a shared queue within one process, and nothing survives a restart.
 */
export class InProcessQueue implements BackgroundQueue {
  readonly shared = false;
  readonly #waiting: QueuedJob[] = [];
  readonly #running = new Map<string, AbortController>();
  #handler: JobHandler | undefined;
  #concurrency = 1;
  #closed = false;

  async enqueue(job: QueuedJob): Promise<void> {
    if (this.#closed) throw new Error("the background queue is closed");
    this.#waiting.push(job);
    this.#pump();
  }

  async cancel(id: string, action?: string): Promise<boolean> {
    const waiting = this.#waiting.findIndex((job) => jobIdOf(job) === id);
    if (waiting >= 0) {
      const [job] = this.#waiting.splice(waiting, 1);
      // A job cancelled before it started still runs its handler, with its signal fired, so
      // the response ends `cancelled` the one way every cancel ends it.
      this.#start(job!, new JobCancelledError(action));
      return true;
    }
    const running = this.#running.get(id);
    if (running === undefined) return false;
    running.abort(new JobCancelledError(action));
    return true;
  }

  work(handler: JobHandler, concurrency: number): void {
    this.#handler = handler;
    this.#concurrency = Math.max(1, concurrency);
    this.#pump();
  }

  counts(): { waiting: number; running: number } {
    return { waiting: this.#waiting.length, running: this.#running.size };
  }

  #pump(): void {
    while (this.#handler !== undefined && !this.#closed && this.#running.size < this.#concurrency && this.#waiting.length > 0) {
      this.#start(this.#waiting.shift()!, undefined);
    }
  }

  stop(reason: Error): void {
    this.#closed = true;
    for (const job of this.#waiting.splice(0)) this.#start(job, reason);
  }

  #start(job: QueuedJob, abortWith: Error | undefined): void {
    const controller = new AbortController();
    if (abortWith !== undefined) controller.abort(abortWith);
    const id = jobIdOf(job);
    this.#running.set(id, controller);
    const handler = this.#handler;
    const done = () => {
      this.#running.delete(id);
      this.#pump();
    };
    if (handler === undefined) {
      done();
      return;
    }
    // The handler reports its own failures (the response ends `failed`); nothing escapes here.
    handler(job, controller.signal, { attempt: 1 }).then(done, done);
  }

  async close(): Promise<void> {
    this.#closed = true;
  }
}
