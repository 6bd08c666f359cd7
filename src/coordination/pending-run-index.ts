/** One pending interrupt run, as `purge-pending` sees it. */
export interface PendingRunEntry {
  key: string;
  model: string;
  runId: string;
  createdAt: Date;
  lastActivityAt: Date;
}

/**
 * The index of pending interrupt runs kept beside the durable checkpointer, so abandoned
 * runs can be found without scanning checkpoints.
 */
export interface PendingRunIndex {
  /** Adds a run or, when present, moves its last activity to now. */
  record(entry: { key: string; model: string; runId: string }): Promise<void>;
  remove(key: string): Promise<void>;
  get(key: string): Promise<PendingRunEntry | undefined>;
  /** Runs whose last activity is older than the cutoff, oldest first. */
  listIdleSince(cutoff: Date): Promise<PendingRunEntry[]>;
}

/** The index for the memory checkpointer: it lives and dies with the server process. */
export class MemoryPendingRunIndex implements PendingRunIndex {
  readonly #entries = new Map<string, PendingRunEntry>();
  readonly #now: () => Date;

  constructor(now: () => Date = () => new Date()) {
    this.#now = now;
  }

  async record(entry: { key: string; model: string; runId: string }): Promise<void> {
    const now = this.#now();
    const existing = this.#entries.get(entry.key);
    this.#entries.set(entry.key, { ...entry, createdAt: existing?.createdAt ?? now, lastActivityAt: now });
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
      .filter((entry) => entry.lastActivityAt < cutoff)
      .sort((a, b) => a.lastActivityAt.getTime() - b.lastActivityAt.getTime())
      .map((entry) => ({ ...entry }));
  }
}
