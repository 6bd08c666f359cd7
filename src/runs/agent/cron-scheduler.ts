import { CronExpressionParser } from "cron-parser";
import { AgentInvalidBodyError } from "../../errors/catalogue.js";
import type { CronRecord, CronRecords } from "../../store/cron-records.js";
import { DEFAULT_BACKEND_TIMEOUT_MS } from "../../util/deadline.js";
import type { AgentCronJob, AgentRunQueue } from "../jobs.js";
import { backendCall } from "./agent-run-config.js";
import { type CronSkipReason, CronSkips } from "./cron-skips.js";

/** The longest a timer may wait (node's limit, about 24.8 days): a later firing is looked at again then. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The next time a cron fires after `after`, or undefined when it fires no more (past its end). */
export function nextFiring(cron: Pick<CronRecord, "schedule" | "timezone" | "end_time">, after = new Date()): Date | undefined {
  try {
    const expression = CronExpressionParser.parse(cron.schedule, {
      currentDate: after,
      ...(cron.timezone === null ? { tz: "UTC" } : { tz: cron.timezone }),
      ...(cron.end_time === null ? {} : { endDate: new Date(cron.end_time) }),
    });
    return expression.hasNext() ? expression.next().toDate() : undefined;
  } catch {
    return undefined;
  }
}

/** The firings a cron's schedule had after `due` and up to `now` (bounded: a count, not a list). */
export function firingsBetween(cron: Pick<CronRecord, "schedule" | "timezone" | "end_time">, due: Date, now: Date, most = 10_000): number {
  let count = 0;
  for (let at = nextFiring(cron, due); at !== undefined && at.getTime() <= now.getTime() && count < most; at = nextFiring(cron, at)) {
    count += 1;
  }
  return count;
}

/**
 * Checks what a client sends for a cron's times: a schedule in cron syntax (five fields, or six
 * with seconds first), a known IANA timezone, an end time that is a date. The client's 422,
 * naming the field, otherwise.
 */
export function checkCronTimes(times: {
  schedule?: string | undefined;
  timezone?: string | null | undefined;
  end_time?: string | null | undefined;
}): void {
  if (times.timezone != null) {
    try {
      new Intl.DateTimeFormat("en-US", { timeZone: times.timezone });
    } catch {
      throw new AgentInvalidBodyError(`timezone: '${times.timezone.slice(0, 80)}' is not an IANA time zone (such as Europe/Paris).`);
    }
  }
  if (times.end_time != null && Number.isNaN(Date.parse(times.end_time))) {
    throw new AgentInvalidBodyError(`end_time: '${times.end_time.slice(0, 80)}' is not a date (ISO 8601, such as 2027-01-31T00:00:00Z).`);
  }
  if (times.schedule !== undefined) {
    const fields = times.schedule.trim().split(/\s+/u).length;
    try {
      if (fields < 5 || fields > 6) throw new Error("five fields are needed");
      CronExpressionParser.parse(times.schedule, { tz: times.timezone ?? "UTC" });
    } catch (error) {
      throw new AgentInvalidBodyError(
        `schedule: '${times.schedule.slice(0, 80)}' is not a cron expression (five fields, minute hour day month weekday, such as '*/5 * * * *'): ${(error as Error).message}.`,
      );
    }
  }
}

/**
 * Fires the Agent Protocol's crons. With the deployment's shared queue, each enabled cron is a
 * BullMQ job scheduler: Redis holds it, one process fires each firing (`fired`), and a restart
 * loses none. Without, each enabled cron is a timer of this process's, armed again after each
 * firing, all of them armed at start from the records. `fire` makes the cron's run.
 */
export class CronScheduler {
  readonly #records: CronRecords;
  readonly #fire: (cron: CronRecord) => Promise<void>;
  readonly #queue: Pick<AgentRunQueue, "schedule" | "unschedule"> | undefined;
  readonly #log: { warn(object: Record<string, unknown>, message: string): void } | undefined;
  readonly #claim: ((cron: CronRecord, due: string) => Promise<boolean>) | undefined;
  /** Each call to the records, under the server's deadline. */
  readonly #call: <T>(operation: () => Promise<T>) => Promise<T>;
  readonly #timers = new Map<string, NodeJS.Timeout>();
  #closed = false;
  /** The firings crons skip: counted, and logged at most once a minute per cron. */
  readonly skips: CronSkips;

  constructor(options: {
    records: CronRecords;
    fire: (cron: CronRecord) => Promise<void>;
    queue?: Pick<AgentRunQueue, "schedule" | "unschedule">;
    log?: { warn(object: Record<string, unknown>, message: string): void };
    /**
     * Without the shared queue, several processes on one store each arm every cron: a firing is
     * made by the one that claims it first (the records keep the time of its last firing).
     */
    claim?: (cron: CronRecord, due: string) => Promise<boolean>;
    /** The deadline of each call to the records (default 2 s). */
    timeoutMs?: number;
    /** Counts skipped firings in the metrics (busy: its thread was running; late: due while the server was behind). */
    countSkipped?: (reason: CronSkipReason, firings: number) => void;
  }) {
    this.skips = new CronSkips({
      ...(options.log === undefined ? {} : { log: options.log }),
      ...(options.countSkipped === undefined ? {} : { count: options.countSkipped }),
    });
    this.#records = options.records;
    this.#fire = options.fire;
    this.#queue = options.queue?.schedule === undefined ? undefined : options.queue;
    this.#log = options.log;
    this.#claim = options.claim;
    this.#call = (operation) => backendCall("the cron records", options.timeoutMs ?? DEFAULT_BACKEND_TIMEOUT_MS, operation);
  }

  /** Arms every enabled cron of the records (without the shared queue: Redis keeps its own). */
  async start(): Promise<void> {
    if (this.#queue !== undefined) return;
    for (const cron of await this.#call(() => this.#records.enabled())) this.#armTimer(cron);
  }

  /** Fires a cron on its schedule from now on (replacing what it had), or stops it when it is disabled. */
  async arm(cron: CronRecord): Promise<void> {
    if (!cron.enabled) return this.disarm(cron.scope, cron.cron_id);
    if (this.#queue !== undefined) {
      const job: AgentCronJob = { kind: "agent-cron", cronId: cron.cron_id, scope: cron.scope };
      const repeat = {
        pattern: cron.schedule,
        tz: cron.timezone ?? "UTC",
        ...(cron.end_time === null ? {} : { endDate: cron.end_time }),
      };
      await this.#queue.schedule!(`${cron.scope.length}:${cron.scope}:${cron.cron_id}`, repeat, job);
      return;
    }
    this.#armTimer(cron);
  }

  async disarm(scope: string, cronId: string): Promise<void> {
    const key = `${scope.length}:${scope}:${cronId}`;
    clearTimeout(this.#timers.get(key));
    this.#timers.delete(key);
    await this.#queue?.unschedule?.(key);
  }

  /**
   * A firing the shared queue gave this process: the cron's run, if the cron is still there and
   * on. `due` is when it was to fire: the firings its schedule had since (never queued while
   * the workers were behind) are counted as skipped.
   */
  async fired(job: AgentCronJob, due?: number): Promise<void> {
    const cron = await this.#call(() => this.#records.get(job.scope, job.cronId));
    if (cron === undefined || !cron.enabled) {
      // Deleted or disabled while a firing was on its way: its schedule goes too.
      await this.disarm(job.scope, job.cronId);
      return;
    }
    if (due !== undefined) this.skips.note(cron, "late", firingsBetween(cron, new Date(due), new Date()));
    await this.#fire(cron);
  }

  #armTimer(cron: CronRecord): void {
    const key = `${cron.scope.length}:${cron.scope}:${cron.cron_id}`;
    clearTimeout(this.#timers.get(key));
    this.#timers.delete(key);
    const next = nextFiring(cron);
    if (this.#closed || next === undefined) return;
    const wait = Math.min(MAX_TIMER_MS, Math.max(0, next.getTime() - Date.now()));
    const timer = setTimeout(() => {
      this.#timers.delete(key);
      void this.#fireHere(cron, next);
    }, wait);
    timer.unref();
    this.#timers.set(key, timer);
  }

  /** A timer's firing: the cron as the records have it now, its run if it is due, and its next firing. */
  async #fireHere(armed: CronRecord, due: Date): Promise<void> {
    const cron = await this.#call(() => this.#records.get(armed.scope, armed.cron_id)).catch(() => armed);
    if (cron === undefined || !cron.enabled || this.#closed) return;
    let claimed = false;
    try {
      claimed = Date.now() >= due.getTime() && (this.#claim === undefined || (await this.#claim(cron, due.toISOString())));
      if (claimed) await this.#fire(cron);
    } catch (error) {
      this.#log?.warn({ err: error, cronId: cron.cron_id }, "a cron could not make its run; it fires again on its schedule");
    } finally {
      // The timer is armed from now: the firings that came due meanwhile (a busy event loop, a
      // slow store) are skipped, and counted by the process that made this one.
      if (claimed) this.skips.note(cron, "late", firingsBetween(cron, due, new Date()));
      if (!this.#closed) this.#armTimer(cron);
    }
  }

  /** How many crons this process's timers fire (for the tests that count what is left). */
  get armed(): number {
    return this.#timers.size;
  }

  /** Stops every timer of this process's (a shared queue's schedules stay in Redis). */
  close(): void {
    this.#closed = true;
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
  }
}
