import type { BackgroundEventLog, EventsFrom } from "../runs/jobs.js";
import type { ResponseStreamEvent } from "../wire/responses-response.js";

interface Log {
  events: ResponseStreamEvent[];
  finished: boolean;
  /** Wakes the followers when an event is added or the log finishes. */
  waiters: Set<() => void>;
  expiry?: NodeJS.Timeout;
}

/** Resolves at the next wake of `waiters` (an event added, the log ended), or when `signal` fires. */
export function nextWake(waiters: Set<() => void>, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const wake = () => {
      signal.removeEventListener("abort", wake);
      waiters.delete(wake);
      resolve();
    };
    waiters.add(wake);
    signal.addEventListener("abort", wake, { once: true });
  });
}

/**
 * The event log in this process's memory: background runs executed by this process, kept for
 * `retainMs` after they end (default 10 minutes), then forgotten.
 */
export class MemoryEventLog implements BackgroundEventLog {
  readonly #logs = new Map<string, Log>();
  readonly #retainMs: number;

  constructor(options: { retainMs?: number } = {}) {
    this.#retainMs = options.retainMs ?? 600_000;
  }

  #log(responseId: string): Log {
    let log = this.#logs.get(responseId);
    if (log === undefined) {
      log = { events: [], finished: false, waiters: new Set() };
      this.#logs.set(responseId, log);
    }
    return log;
  }

  #wake(log: Log): void {
    const waiters = [...log.waiters];
    log.waiters.clear();
    for (const wake of waiters) wake();
  }

  async append(responseId: string, events: readonly ResponseStreamEvent[]): Promise<void> {
    if (events.length === 0) return;
    const log = this.#log(responseId);
    if (log.finished) return;
    log.events.push(...events);
    this.#wake(log);
  }

  async last(responseId: string): Promise<number> {
    return (this.#logs.get(responseId)?.events.length ?? 0) - 1;
  }

  async finish(responseId: string): Promise<void> {
    // A response that streamed nothing has no log to finish.
    const log = this.#logs.get(responseId);
    if (log === undefined || log.finished) return;
    log.finished = true;
    this.#wake(log);
    log.expiry = setTimeout(() => this.#logs.delete(responseId), this.#retainMs);
    log.expiry.unref();
  }

  async from(responseId: string, after: number, signal: AbortSignal): Promise<EventsFrom> {
    const log = this.#logs.get(responseId);
    if (log === undefined) return { kind: "unknown" };
    const last = log.events.length - 1;
    if (log.finished && after >= last) return { kind: "past-end", last };
    return { kind: "events", events: this.#follow(log, after, signal) };
  }

  async *#follow(log: Log, after: number, signal: AbortSignal): AsyncGenerator<ResponseStreamEvent> {
    // Sequence numbers start at 0 and have no gaps: an event's number is its index.
    let next = after + 1;
    for (;;) {
      while (next < log.events.length) yield log.events[next++]!;
      if (log.finished || signal.aborted) return;
      await nextWake(log.waiters, signal);
    }
  }

  async close(): Promise<void> {
    for (const log of this.#logs.values()) {
      clearTimeout(log.expiry);
      log.finished = true;
      this.#wake(log);
    }
    this.#logs.clear();
  }
}
