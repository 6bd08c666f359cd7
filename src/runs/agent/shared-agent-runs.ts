import type { RunCoordinator, RunLease } from "../../coordination/run-coordinator.js";
import { AgentConflictError } from "../../errors/catalogue.js";
import type { AgentRecords, AgentRunRecord, AgentThreadRecord } from "../../store/agent-records.js";
import { withDeadline } from "../../util/deadline.js";
import type { AgentRunJob, AgentRunQueue, BackgroundEventLog } from "../jobs.js";
import { type AgentRunRequest, type Backend, newRunRecord, resolvedOf } from "./agent-run-config.js";

import type { ProtocolLogs } from "./protocol-log.js";
import { type LoggedEvent, RunEvents } from "./run-events.js";

/**
 * The deployment's shared queue, as the Agent Protocol uses it: a run created in the
 * background is a job any process may work (and take over from a worker that died), its
 * events go to a log every process reads, and a cancel reaches the worker that runs it.
 */
export interface SharedAgentRuns {
  queue: AgentRunQueue;
  events: BackgroundEventLog<LoggedEvent>;
  /** A queued run's thread lease expires this soon after its worker stops (the queue's takeover time). */
  leaseTtlMs?: number;
  /** Protocol v2's thread logs, which the worker of a protocol run writes and any process follows. */
  protocolLogs: ProtocolLogs;
}

/** A run the shared queue gave this worker: its job's signal, and the shared log its events go to. */
export interface JobRun {
  signal: AbortSignal;
  attempt: number;
  writer: SharedLogWriter | undefined;
}

/** How often a queued run looks again for its thread's lease (held by the run before it). */
const LEASE_POLL_MS = 200;

/**
 * The thread's lease, once the run before it lets go: polled until it is free or the signal
 * fires (a cancel, a stop). Runs of one thread take turns this way across processes.
 */
export async function leaseWhenFree(
  coordinator: RunCoordinator,
  key: string,
  signal: AbortSignal,
  ttlMs: number | undefined,
  backend: <T>(what: string, operation: () => Promise<T>) => Promise<T>,
): Promise<RunLease> {
  for (;;) {
    if (signal.aborted) throw signal.reason;
    const lease = await backend("the run coordinator", () => coordinator.tryAcquire(key, ttlMs === undefined ? undefined : { ttlMs }));
    if (lease !== null) return lease;
    await pause(LEASE_POLL_MS, signal);
  }
}

/**
 * Writes a run's events to the shared log in order, as they come: what arrives while a write
 * is out goes in the next one. A log that fails loses events (warned once), never the run.
 */
export class SharedLogWriter {
  readonly #log: BackgroundEventLog<LoggedEvent>;
  readonly #runId: string;
  readonly #timeoutMs: number;
  readonly #warn: (error: unknown) => void;
  #pending: LoggedEvent[] = [];
  #writing: Promise<void> | undefined;
  #failed = false;

  constructor(log: BackgroundEventLog<LoggedEvent>, runId: string, timeoutMs: number, warn: (error: unknown) => void) {
    this.#log = log;
    this.#runId = runId;
    this.#timeoutMs = timeoutMs;
    this.#warn = warn;
  }

  add(event: LoggedEvent): void {
    this.#pending.push(event);
    this.#writing ??= this.#drain();
  }

  async #drain(): Promise<void> {
    while (this.#pending.length > 0) {
      const batch = this.#pending;
      this.#pending = [];
      await withDeadline("the run's event log", this.#timeoutMs, this.#log.append(this.#runId, batch)).catch((error: unknown) => {
        if (!this.#failed) this.#warn(error);
        this.#failed = true;
      });
    }
    this.#writing = undefined;
  }

  /** Waits for every event added so far to be written. */
  async flush(): Promise<void> {
    while (this.#writing !== undefined) await this.#writing;
  }

  /** Writes what is left and lets go of the log without ending it: the run goes on elsewhere. */
  async leave(): Promise<void> {
    await this.flush();
    this.#log.release?.(this.#runId);
  }

  /** Writes what is left, then marks the log complete: followers end after the last event. */
  async finish(): Promise<void> {
    await this.flush();
    await withDeadline("the run's event log", this.#timeoutMs, this.#log.finish(this.#runId)).catch((error: unknown) => {
      if (!this.#failed) this.#warn(error);
      this.#log.release?.(this.#runId);
    });
  }
}

/** The runs of a thread that wait or run, on any process (their records say). */
async function activeRuns(records: AgentRecords, backend: Backend, scope: string, threadId: string): Promise<AgentRunRecord[]> {
  const runs = await backend("the thread records", () => records.listRuns(scope, threadId));
  return runs.filter((run) => run.status === "pending" || run.status === "running");
}

/** Whether the thread of `run` has another run that waits or runs, on any process (false when the records cannot say). */
export function othersActive(records: AgentRecords, backend: Backend, run: AgentRunRecord): Promise<boolean> {
  return activeRuns(records, backend, run.scope, run.thread_id)
    .then((runs) => runs.some((other) => other.run_id !== run.run_id))
    .catch(() => false);
}

/**
 * Queues a background run on the shared queue: the multitask strategy against the runs the
 * thread has on any process, then the records (`pending`, the thread busy), then the job.
 */
export async function enqueueRun(
  deps: { records: AgentRecords; shared: SharedAgentRuns; backend: Backend; coordinator: RunCoordinator },
  run: { scope: string; request: AgentRunRequest; model: string; temporary: boolean; id: string; thread: AgentThreadRecord },
  cancel: (runId: string, action: "interrupt" | "rollback") => Promise<void>,
): Promise<AgentRunRecord> {
  if (run.temporary) return admitRun(deps, run, cancel);
  // One creation at a time per thread, on every process: the check of the runs it has and the
  // new run's record are one step, so `reject` lets exactly one through.
  const key = `agent-admit:${run.scope}\u0000${run.id}`;
  const deadline = Date.now() + ADMISSION_WAIT_MS;
  for (;;) {
    const lease = await deps.backend("the run coordinator", () => deps.coordinator.tryAcquire(key, { ttlMs: ADMISSION_TTL_MS }));
    if (lease !== null) {
      try {
        return await admitRun(deps, run, cancel);
      } finally {
        await lease.release().catch(() => {});
      }
    }
    // Another run is being made on this thread right now: it is running, for `reject`.
    if (run.request.multitaskStrategy === "reject") throw new AgentConflictError(ALREADY_RUNNING);
    if (Date.now() > deadline) throw new AgentConflictError("This thread is taking runs from many clients at once; send this run again.");
    await pause(ADMISSION_POLL_MS, new AbortController().signal);
  }
}

/** The admission of one run: no longer than this, and another creation waits this long between looks. */
const ADMISSION_TTL_MS = 10_000;
const ADMISSION_POLL_MS = 20;
const ADMISSION_WAIT_MS = 10_000;
const ALREADY_RUNNING = "This thread is already running a run. Wait for it to finish, or choose another multitask_strategy.";

/** The multitask strategy against the runs the thread has on any process, then the records, then the job. */
async function admitRun(
  deps: { records: AgentRecords; shared: SharedAgentRuns; backend: Backend },
  run: { scope: string; request: AgentRunRequest; model: string; temporary: boolean; id: string; thread: AgentThreadRecord },
  cancel: (runId: string, action: "interrupt" | "rollback") => Promise<void>,
): Promise<AgentRunRecord> {
  const { records, shared, backend } = deps;
  const { scope, request, model, temporary, id, thread } = run;
  const active = temporary ? [] : await activeRuns(records, backend, scope, id);
  if (active.length > 0 && request.multitaskStrategy === "reject") throw new AgentConflictError(ALREADY_RUNNING);
  if (request.command?.resume !== undefined && active.length === 0 && thread.status !== "interrupted") {
    throw new AgentConflictError(`Thread ${id} is not waiting on an interrupt: there is nothing to resume.`);
  }
  if (request.multitaskStrategy === "interrupt" || request.multitaskStrategy === "rollback") {
    // A run streaming to a client of another process cannot be stopped from here: this one waits its turn.
    for (const earlier of active) await cancel(earlier.run_id, request.multitaskStrategy).catch(() => {});
  }
  const at = new Date().toISOString();
  const record = newRunRecord(scope, id, request, temporary, at, resolvedOf(model, thread));
  const busy: AgentThreadRecord = { ...thread, status: "busy", updated_at: at, graph_id: model };
  await backend("the thread records", async () => {
    await records.putThread(busy);
    await records.putRun(record);
  });
  const job: AgentRunJob = {
    kind: "agent-run",
    runId: record.run_id,
    threadId: id,
    scope,
    request: { ...request },
    queuedAt: Date.now(),
    ...(request.afterSeconds === undefined
      ? { records: { run: record, thread: busy } }
      : { delayMs: Math.round(request.afterSeconds * 1000) }),
  };
  try {
    // Its log starts now, with the stream's first event: a join or a join stream follows it from here.
    const metadata: LoggedEvent = { id: 0, event: "metadata", json: JSON.stringify({ run_id: record.run_id, attempt: 1 }) };
    await backend("the run's event log", () => shared.events.append(record.run_id, [metadata]));
    await backend("the background queue", () => shared.queue.enqueue(job));
  } catch (error) {
    // Not queued: the records go back to what they were.
    await backend("the thread records", async () => {
      await records.deleteRun(scope, record.run_id);
      await records.putThread({ ...thread, updated_at: new Date().toISOString() });
    }).catch(() => {});
    throw error;
  }
  return record;
}

/** The event log of a run a worker of the shared queue runs: numbered after what an earlier worker logged. */
/** A queued run's records: at its first attempt those stored with its job; else read, both at once. */
export async function jobRecords(
  job: AgentRunJob,
  attempt: number,
  records: AgentRecords,
  backend: Backend,
): Promise<[AgentRunRecord | undefined, AgentThreadRecord | undefined]> {
  if (attempt === 1 && job.records !== undefined) return [{ ...job.records.run }, job.records.thread];
  return backend("the thread records", () =>
    Promise.all([records.getRun(job.scope, job.runId), records.getThread(job.scope, job.threadId)]),
  );
}

export async function jobEvents(
  shared: SharedAgentRuns | undefined,
  runId: string,
  options: { backend: Backend; timeoutMs: number; warn: (error: unknown) => void; attempt: number },
): Promise<{ writer: SharedLogWriter | undefined; events: RunEvents }> {
  if (shared === undefined) return { writer: undefined, events: new RunEvents() };
  const writer = new SharedLogWriter(shared.events, runId, options.timeoutMs, options.warn);
  // After what is logged: the metadata logged when it was queued (all there is at a first
  // attempt), and what an earlier worker logged.
  const first = options.attempt === 1 ? 1 : (await options.backend("the run's event log", () => shared.events.last(runId))) + 1;
  shared.events.claim?.(runId, first);
  return { writer, events: new RunEvents({ first, tee: (event) => writer.add(event) }) };
}

/**
 * The last entry a worker logs for a run it ends: what `runs/wait` answers (the thread's values
 * as the run left them, or `{ __error__ }`). Not an event of the protocol: streams skip it.
 */
export const RUN_RESULT = "chat-serve/result";

/**
 * The events of a run of the shared queue, from any process: those after `after`, then each
 * new one until it ends or `signal` fires. A run not started yet (queued, or waiting for its
 * thread) has no log: it is waited for while `active()` says the run has not ended.
 */
async function* followShared(
  shared: SharedAgentRuns,
  backend: Backend,
  runId: string,
  after: number,
  signal: AbortSignal,
  active: () => Promise<boolean>,
): AsyncGenerator<LoggedEvent> {
  for (;;) {
    const found = await backend("the run's event log", () => shared.events.from(runId, after, signal));
    if (found.kind === "events") {
      yield* found.events;
      return;
    }
    if (found.kind === "past-end" || signal.aborted || !(await active())) return;
    await pause(ELSEWHERE_POLL_MS, signal);
  }
}

/** How often a join of a run on another process looks at its record. */
const ELSEWHERE_POLL_MS = 250;

/** Waits for a run another process runs to end (its record says so), or for `signal`. */
export async function awaitRunEnd(
  records: AgentRecords,
  backend: Backend,
  scope: string,
  runId: string,
  signal: AbortSignal,
): Promise<void> {
  for (;;) {
    const record = await backend("the thread records", () => records.getRun(scope, runId));
    if (record === undefined || (record.status !== "pending" && record.status !== "running") || signal.aborted) return;
    await pause(ELSEWHERE_POLL_MS, signal);
  }
}

/** Waits `ms`, or less when `signal` fires. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/** Beyond a takeover, how long a cancel with `wait` waits for a run of the shared queue to end. */
const CANCEL_WAIT_MARGIN_MS = 30_000;

/** Waits for a cancelled run of the shared queue to end, at most as long as a takeover and a step take. */
export async function awaitCancelled(
  runs: { awaitElsewhere(scope: string, runId: string, signal: AbortSignal): Promise<void> },
  scope: string,
  runId: string,
  leaseTtlMs: number | undefined,
): Promise<void> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), (leaseTtlMs ?? 30_000) + CANCEL_WAIT_MARGIN_MS);
  try {
    await runs.awaitElsewhere(scope, runId, controller.signal);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A run of the shared queue as any process follows it: where its events start (after
 * `after`; without it, from now on) and its events from a point. Undefined without a shared
 * queue, or for a run its log does not hold that has ended (or never was queued).
 */
export async function sharedFollower(
  shared: SharedAgentRuns | undefined,
  backend: Backend,
  records: AgentRecords,
  run: AgentRunRecord,
  after: number | undefined,
): Promise<{ after: number; follow(from: number, signal?: AbortSignal): AsyncGenerator<LoggedEvent> } | undefined> {
  if (shared === undefined) return undefined;
  const going = run.status === "pending" || run.status === "running";
  // A run that goes on is followed from the place asked for; where its log ends matters only without one.
  const last = after !== undefined && going ? after : await backend("the run's event log", () => shared.events.last(run.run_id));
  if (last < 0 && !going) return undefined;
  const active = () => runActive(records, backend, run);
  return {
    after: after ?? last,
    follow: async function* (from, signal) {
      for await (const event of followShared(shared, backend, run.run_id, from, signal ?? new AbortController().signal, active)) {
        if (event.event !== RUN_RESULT) yield event;
      }
    },
  };
}

/** Whether a run waits or runs, on any process, as its record says now. */
async function runActive(records: AgentRecords, backend: Backend, run: AgentRunRecord): Promise<boolean> {
  const record = await backend("the thread records", () => records.getRun(run.scope, run.run_id));
  return record?.status === "pending" || record?.status === "running";
}

/**
 * What a run of the shared queue ended with, from any process, once it has ended (or `signal`
 * fired: undefined): the result its worker logged, `null` for a run that logged none (cancelled).
 */
export async function sharedResult(
  shared: SharedAgentRuns,
  backend: Backend,
  records: AgentRecords,
  run: AgentRunRecord,
  signal: AbortSignal,
): Promise<unknown> {
  const active = () => runActive(records, backend, run);
  let result: unknown = null;
  for await (const event of followShared(shared, backend, run.run_id, -1, signal, active)) {
    if (event.event === RUN_RESULT) result = JSON.parse(event.json);
  }
  return signal.aborted ? undefined : result;
}
