import type { CronRecord } from "../../store/cron-records.js";

/** Why a firing did not make its run: its thread was busy, or it came due while the deployment was behind. */
export type CronSkipReason = "busy" | "late";

/** How often one cron's skipped firings are logged, at most. */
const LOG_EVERY_MS = 60_000;

/**
 * Counts the firings crons skip, in the metrics at once and in the log at most once a minute per
 * cron (with how many since the last line), so a deployment past its capacity says so without
 * a line per firing. No timer: a cron's line is written when it skips again a minute later.
 */
export class CronSkips {
  readonly #log: { warn(object: Record<string, unknown>, message: string): void } | undefined;
  readonly #count: ((reason: CronSkipReason, firings: number) => void) | undefined;
  readonly #pending = new Map<string, { busy: number; late: number; loggedAt: number }>();
  readonly #now: () => number;

  constructor(options: {
    log?: { warn(object: Record<string, unknown>, message: string): void };
    count?: (reason: CronSkipReason, firings: number) => void;
    now?: () => number;
  }) {
    this.#log = options.log;
    this.#count = options.count;
    this.#now = options.now ?? Date.now;
  }

  /** `firings` of `cron` skipped for `reason`. */
  note(cron: Pick<CronRecord, "scope" | "cron_id" | "thread_id">, reason: CronSkipReason, firings = 1): void {
    if (firings <= 0) return;
    this.#count?.(reason, firings);
    const key = `${cron.scope.length}:${cron.scope}:${cron.cron_id}`;
    const now = this.#now();
    const entry = this.#pending.get(key) ?? { busy: 0, late: 0, loggedAt: Number.NEGATIVE_INFINITY };
    entry[reason] += firings;
    if (now - entry.loggedAt < LOG_EVERY_MS) {
      this.#pending.set(key, entry);
      return;
    }
    this.#log?.warn(
      { cronId: cron.cron_id, threadId: cron.thread_id, busyThread: entry.busy, late: entry.late },
      `a cron skipped ${entry.busy + entry.late} firing${entry.busy + entry.late === 1 ? "" : "s"} since its last report: ${entry.busy} because its thread was still running, ${entry.late} because they came due while the server was behind (too many crons for its capacity?)`,
    );
    this.#pending.set(key, { busy: 0, late: 0, loggedAt: now });
    // Bounded: a cron that no longer skips is forgotten once its minute is past.
    if (this.#pending.size > 10_000) {
      for (const [other, { loggedAt }] of this.#pending) if (now - loggedAt >= LOG_EVERY_MS) this.#pending.delete(other);
    }
  }
}
