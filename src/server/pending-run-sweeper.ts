import { deleteIdleRuns, type IdleRunResult, type PendingRunStores } from "../coordination/expire-pending.js";
import { SweepTimer } from "./sweep-timer.js";

/** How long an expired run's mark is kept by default: 30 days, the store's default retention. */
const DEFAULT_REMEMBER_EXPIRED_MS = 30 * 24 * 60 * 60 * 1000;

/** The key of the sweep's own lease: one sweep at a time across every process and host. */
export const SWEEP_LEASE_KEY = "chat-serve:pending-run-sweep";

export interface PendingRunSweeperOptions extends PendingRunStores {
  /** Runs idle for longer than this are deleted. */
  expireAfterMs: number;
  /** How often to look. */
  sweepEveryMs: number;
  /**
   * How long an expired run is remembered, so that a client coming back late is told it expired
   * (default 30 days, never less than `expireAfterMs`). The index also keeps at most its own
   * bound of such marks, forgetting the oldest first.
   */
  rememberExpiredMs?: number;
  /** Told what each sweep did, or why it failed. */
  log?: { info(object: object, message: string): void; warn(object: object, message: string): void };
}

/**
 * Deletes abandoned pending interrupt runs on a timer, with the same deletion path as
 * `purge-pending`. Every process may run one: the sweep takes a lease first, so exactly one
 * sweeps at a time, and a run being resumed is skipped. An expired run's index entry stays as
 * a tombstone for `rememberExpiredMs` (the store's retention in `chat-serve start`), so a late
 * resume is told the run expired.
 */
export class PendingRunSweeper {
  readonly #options: PendingRunSweeperOptions;
  readonly #timer: SweepTimer;

  constructor(options: PendingRunSweeperOptions) {
    this.#options = options;
    this.#timer = new SweepTimer(
      options.sweepEveryMs,
      () => this.sweep(),
      (error) => options.log?.warn({ err: error }, "the pending-run sweep failed; it runs again later"),
    );
  }

  start(): void {
    this.#timer.start();
  }

  /** Stops the timer and waits for a sweep in progress. */
  stop(): Promise<void> {
    return this.#timer.stop();
  }

  /** One sweep: undefined when another process holds the sweep's lease. */
  async sweep(now = new Date()): Promise<IdleRunResult[] | undefined> {
    const lease = await this.#options.coordinator.tryAcquire(SWEEP_LEASE_KEY);
    if (lease === null) return undefined;
    try {
      const cutoff = new Date(now.getTime() - this.#options.expireAfterMs);
      const results = await deleteIdleRuns(this.#options, cutoff, { mode: "expire" });
      // Tombstones are kept long after the run: the client that comes back late needs them most.
      const remember = Math.max(this.#options.rememberExpiredMs ?? DEFAULT_REMEMBER_EXPIRED_MS, this.#options.expireAfterMs);
      await this.#options.pendingRuns.forgetExpiredBefore(new Date(now.getTime() - remember));
      const expired = results.filter((result) => result.outcome === "expired");
      if (expired.length > 0) {
        this.#options.log?.info(
          { expired: expired.map(({ entry }) => ({ model: entry.model, runId: entry.runId })) },
          `expired ${expired.length} pending run${expired.length === 1 ? "" : "s"} idle for longer than ${this.#options.expireAfterMs / 1000}s`,
        );
      }
      return results;
    } finally {
      await lease.release();
    }
  }
}
