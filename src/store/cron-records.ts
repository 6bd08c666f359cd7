import { copyData } from "../util/copy-data.js";

/** A cron of the Agent Protocol: a run made on a schedule, on a thread of its own or a new one each time. */
export interface CronRecord {
  cron_id: string;
  scope: string;
  assistant_id: string;
  /** The thread each run is made on; null: a new thread per run (`on_run_completed` says what becomes of it). */
  thread_id: string | null;
  /** Cron syntax: five fields (minute to weekday), or six with seconds first. */
  schedule: string;
  /** The IANA zone the schedule is read in; null: UTC. */
  timezone: string | null;
  /** No run is made after this (ISO 8601); null: none. */
  end_time: string | null;
  on_run_completed: "delete" | "keep" | null;
  /** The run each firing makes, as a run's body (without `assistant_id`). */
  payload: Record<string, unknown>;
  metadata: Record<string, unknown>;
  enabled: boolean;
  user_id: string | null;
  created_at: string;
  updated_at: string;
  /** When its last firing was due (not shown to clients): a firing is made once, by the process that marks it. */
  last_fired_at?: string;
}

/** Where the Agent Protocol keeps its crons, scoped to a tenant. */
export interface CronRecords {
  get(scope: string, cronId: string): Promise<CronRecord | undefined>;
  /** Adds or replaces a cron. */
  put(record: CronRecord): Promise<void>;
  /** True when it existed. */
  delete(scope: string, cronId: string): Promise<boolean>;
  /** Every cron of a scope (the surface filters, sorts and pages them). */
  list(scope: string): Promise<CronRecord[]>;
  /** Every enabled cron of every scope (what a process's timers fire, without the shared queue). */
  enabled(): Promise<CronRecord[]>;
  /** Marks the firing due at `due` as made; false when it was already (another process's). */
  claimFiring(scope: string, cronId: string, due: string): Promise<boolean>;
}

/** How many crons the in-memory records keep. */
export const MEMORY_CRON_LIMIT = 10_000;

const keyOf = (scope: string, id: string) => `${scope}\u0000${id}`;

/** The embedded crons: in this process's memory, gone at restart, bounded by count. */
export class MemoryCronRecords implements CronRecords {
  readonly #crons = new Map<string, CronRecord>();

  /** True when one more cron would pass the cap. */
  get full(): boolean {
    return this.#crons.size >= MEMORY_CRON_LIMIT;
  }

  async get(scope: string, cronId: string): Promise<CronRecord | undefined> {
    const found = this.#crons.get(keyOf(scope, cronId));
    return found === undefined ? undefined : copyData(found);
  }

  async put(record: CronRecord): Promise<void> {
    this.#crons.set(keyOf(record.scope, record.cron_id), copyData(record));
  }

  async delete(scope: string, cronId: string): Promise<boolean> {
    return this.#crons.delete(keyOf(scope, cronId));
  }

  async list(scope: string): Promise<CronRecord[]> {
    return [...this.#crons.values()].filter((record) => record.scope === scope).map((record) => copyData(record));
  }

  async enabled(): Promise<CronRecord[]> {
    return [...this.#crons.values()].filter((record) => record.enabled).map((record) => copyData(record));
  }

  async claimFiring(scope: string, cronId: string, due: string): Promise<boolean> {
    const record = this.#crons.get(keyOf(scope, cronId));
    if (record === undefined || (record.last_fired_at !== undefined && record.last_fired_at >= due)) return false;
    record.last_fired_at = due;
    return true;
  }
}
