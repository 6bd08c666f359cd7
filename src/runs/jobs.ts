import type { AgentRunRecord, AgentThreadRecord } from "../store/agent-records.js";
import type { ResponseStreamEvent } from "../wire/responses-response.js";

// What a job of the background queue is, as the engine sees it: how a job's run ends, why its
// signal fired, the Agent Protocol's job, and the event logs any process reads. The queues
// and logs themselves live in background/; the engine (runs/) knows only these.

/**
 * How a job's run ended on this worker: `done` (its response has its final status), or
 * `handed-back` (the worker is stopping and another worker takes the run over from its last
 * step), or `lost` (this worker lost the job's lock: another one runs it now).
 */
export type JobOutcome = "done" | "handed-back" | "lost";

/** Why a job's signal fired: the response was cancelled. */
export class JobCancelledError extends Error {
  /** What the canceller asked for beyond stopping, when it said (an Agent Protocol run's `rollback`). */
  readonly action: string | undefined;
  constructor(action?: string) {
    super("The response was cancelled.");
    this.action = action;
  }
}

/** Why a job's signal fired: this worker lost the job's lock, and another worker runs it now. */
export class JobLostError extends Error {
  constructor() {
    super("This worker lost the background run's lock; another worker has taken it over.");
  }
}

/**
 * An Agent Protocol run created in the background (`POST /threads/{id}/runs`) on a shared
 * queue: its records exist (status `pending`); the worker runs it on its thread.
 */
export interface AgentRunJob {
  kind: "agent-run";
  /** The run (also the job's id). */
  runId: string;
  threadId: string;
  scope: string;
  /** The run as the client asked for it (`AgentRunRequest`, without a protocol sink), as JSON. */
  request: Record<string, unknown>;
  /** When it was queued (ms since the epoch). */
  queuedAt: number;
  /** How long it waits in the queue before any worker takes it (the run's `after_seconds`). */
  delayMs?: number;
  /**
   * The run's and its thread's records as they were stored with the job (a run that starts at
   * once): its first worker starts from them without reading them back. A later attempt reads them.
   */
  records?: { run: AgentRunRecord; thread: AgentThreadRecord };
}

/** One firing of an Agent Protocol cron on the shared queue: the worker that takes it makes the cron's run. */
export interface AgentCronJob {
  kind: "agent-cron";
  cronId: string;
  scope: string;
}

/** When a cron fires: its cron syntax, the zone it is read in, and when it stops. */
export interface CronRepeat {
  pattern: string;
  tz?: string;
  endDate?: string;
}

/** Where an Agent Protocol run is queued and cancelled: the deployment's shared queue. */
export interface AgentRunQueue {
  enqueue(job: AgentRunJob): Promise<void>;
  /** True when the queue had the job (waiting or running); `action` reaches its handler. */
  cancel(id: string, action?: string): Promise<boolean>;
  /** Fires a cron on its schedule, once per firing across every process (made or replaced). */
  schedule?(cronId: string, repeat: CronRepeat, job: AgentCronJob): Promise<void>;
  /** Stops a cron's firings. */
  unschedule?(cronId: string): Promise<void>;
}

/** What reading a response's events from a point found. */
export type EventsFrom<E = ResponseStreamEvent> =
  | { kind: "events"; events: AsyncIterable<E> }
  /** The log holds no events of this response (never streamed here, or expired). */
  | { kind: "unknown" }
  /** `after` is at or past the last event of a response whose events have all been written. */
  | { kind: "past-end"; last: number };

/**
 * The events of background responses, in order, so a client can reattach and replay them
 * from any point, then follow the live ones until the response ends.
 */
export interface BackgroundEventLog<E = ResponseStreamEvent> {
  /** Adds events of a response, in order (an event's `sequence_number` is its place). */
  append(responseId: string, events: readonly E[]): Promise<void>;
  /** Marks a response's events complete: followers end after the last one. */
  finish(responseId: string): Promise<void>;
  /** The sequence number of a response's last logged event; -1 when none is logged. */
  last(responseId: string): Promise<number>;
  /** The events after `after` (a sequence number; -1 for all), then the live ones until the end. */
  from(responseId: string, after: number, signal: AbortSignal): Promise<EventsFrom<E>>;
  /** This process writes the log from `first` on: its followers here may read it from memory. */
  claim?(responseId: string, first: number): void;
  /** This process stops writing the log without ending it (its run goes on elsewhere). */
  release?(responseId: string): void;
  close(): Promise<void>;
}
