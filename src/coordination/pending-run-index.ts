/** One pending interrupt run, as `purge-pending` sees it. */
export interface PendingRunEntry {
  key: string;
  model: string;
  runId: string;
  /** The checkpoint scope (tenant) of the run; undefined for runs indexed before scopes were. */
  scope: string | undefined;
  createdAt: Date;
  lastActivityAt: Date;
  /** When the server's expiry deleted the run; the entry stays as a tombstone so a late resume can be told. */
  expiredAt: Date | undefined;
  /** A run paused on a conversation's thread: the thread, and the checkpoint it paused at. */
  thread?: PausedThread;
}

/** Where a run on a conversation's thread paused: that thread is the conversation's, never deleted with the run. */
export interface PausedThread {
  threadId: string;
  checkpointId: string;
}

/** What a run is indexed with. */
export interface PendingRunRecord {
  key: string;
  model: string;
  runId: string;
  scope: string;
  thread?: PausedThread;
}

/**
 * The index of pending interrupt runs kept beside the durable checkpointer, so abandoned
 * runs can be found without scanning checkpoints.
 */
export interface PendingRunIndex {
  /** Adds a run or, when present, moves its last activity to now (and clears an expiry). */
  record(entry: PendingRunRecord): Promise<void>;
  remove(key: string): Promise<void>;
  get(key: string): Promise<PendingRunEntry | undefined>;
  /** Pending runs whose last activity is older than the cutoff, oldest first (tombstones left out). */
  listIdleSince(cutoff: Date): Promise<PendingRunEntry[]>;
  /** How many runs are pending (tombstones left out). */
  count(): Promise<number>;
  /** Marks a run as expired: a tombstone that lets a late resume be told why. */
  markExpired(key: string): Promise<void>;
  /** Deletes the tombstones of runs that expired before the cutoff, and the oldest past the index's bound. */
  forgetExpiredBefore(cutoff: Date): Promise<void>;
}

/** Expiry tombstones an index keeps at most, the oldest forgotten first: a bounded memory of late clients. */
export const MAX_EXPIRED_MARKS = 100_000;

/** Paused runs the memory index keeps before the least recently active is expired. */
const DEFAULT_MAX_PAUSED_RUNS = 1_000;

/**
 * The index for the memory checkpointer: it lives and dies with the server process, and is
 * bounded: past `maxPaused` runs, the least recently active one is expired (its checkpoint
 * deleted through `onEvict`, a tombstone kept so a late resume is told), like an idle run.
 */
export class MemoryPendingRunIndex implements PendingRunIndex {
  readonly #entries = new Map<string, PendingRunEntry>();
  readonly #now: () => Date;
  readonly #maxPaused: number;
  /** Deletes an evicted run's checkpoint; set by the registry that owns the checkpointers. */
  onEvict: ((entry: PendingRunEntry) => Promise<void>) | undefined;

  readonly #maxExpired: number;

  constructor(now: () => Date = () => new Date(), options: { maxPaused?: number; maxExpired?: number } = {}) {
    this.#now = now;
    this.#maxPaused = options.maxPaused ?? DEFAULT_MAX_PAUSED_RUNS;
    this.#maxExpired = options.maxExpired ?? MAX_EXPIRED_MARKS;
  }

  async record(entry: PendingRunRecord): Promise<void> {
    const now = this.#now();
    const existing = this.#entries.get(entry.key);
    const createdAt = existing === undefined || existing.expiredAt !== undefined ? now : existing.createdAt;
    // Map order is activity order: the most recently active last.
    this.#entries.delete(entry.key);
    this.#entries.set(entry.key, { ...entry, createdAt, lastActivityAt: now, expiredAt: undefined });
    if (entry.thread === undefined) delete this.#entries.get(entry.key)!.thread;
    await this.#evict();
  }

  async #evict(): Promise<void> {
    let pending = await this.count();
    for (const entry of this.#entries.values()) {
      if (pending <= this.#maxPaused) return;
      if (entry.expiredAt !== undefined) continue;
      pending -= 1;
      entry.expiredAt = this.#now();
      // Best effort: the tombstone says expired either way.
      await this.onEvict?.({ ...entry }).catch(() => {});
    }
  }

  async remove(key: string): Promise<void> {
    this.#entries.delete(key);
  }

  async get(key: string): Promise<PendingRunEntry | undefined> {
    const entry = this.#entries.get(key);
    return entry === undefined ? undefined : { ...entry };
  }

  async listIdleSince(cutoff: Date): Promise<PendingRunEntry[]> {
    return [...this.#entries.values()]
      .filter((entry) => entry.expiredAt === undefined && entry.lastActivityAt < cutoff)
      .sort((a, b) => a.lastActivityAt.getTime() - b.lastActivityAt.getTime())
      .map((entry) => ({ ...entry }));
  }

  async count(): Promise<number> {
    let pending = 0;
    for (const entry of this.#entries.values()) if (entry.expiredAt === undefined) pending += 1;
    return pending;
  }

  async markExpired(key: string): Promise<void> {
    const entry = this.#entries.get(key);
    if (entry !== undefined) entry.expiredAt = this.#now();
  }

  async forgetExpiredBefore(cutoff: Date): Promise<void> {
    const marks: [string, Date][] = [];
    for (const [key, entry] of this.#entries) {
      if (entry.expiredAt === undefined) continue;
      if (entry.expiredAt < cutoff) this.#entries.delete(key);
      else marks.push([key, entry.expiredAt]);
    }
    if (marks.length <= this.#maxExpired) return;
    marks.sort((a, b) => a[1].getTime() - b[1].getTime());
    for (const [key] of marks.slice(0, marks.length - this.#maxExpired)) this.#entries.delete(key);
  }
}
