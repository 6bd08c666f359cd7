import type { ResponseStreamEvent } from "../../wire/responses-response.js";

/** What reading a response's events from a point found. */
export type EventsFrom =
  | { kind: "events"; events: AsyncIterable<ResponseStreamEvent> }
  /** The log holds no events of this response (never streamed here, or expired). */
  | { kind: "unknown" }
  /** `after` is at or past the last event of a response whose events have all been written. */
  | { kind: "past-end"; last: number };

/**
 * The events of background responses, in order, so a client can reattach and replay them
 * from any point, then follow the live ones until the response ends.
 */
export interface BackgroundEventLog {
  /** Adds an event of a response (its `sequence_number` is its place). */
  append(responseId: string, event: ResponseStreamEvent): void;
  /** Marks a response's events complete: followers end after the last one. */
  finish(responseId: string): void;
  /** The events after `after` (a sequence number; -1 for all), then the live ones until the end. */
  from(responseId: string, after: number, signal: AbortSignal): EventsFrom;
  close(): void;
}

interface Log {
  events: ResponseStreamEvent[];
  finished: boolean;
  /** Wakes the followers when an event is added or the log finishes. */
  waiters: Set<() => void>;
  expiry?: NodeJS.Timeout;
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

  append(responseId: string, event: ResponseStreamEvent): void {
    const log = this.#log(responseId);
    if (log.finished) return;
    log.events.push(event);
    this.#wake(log);
  }

  finish(responseId: string): void {
    // A response that streamed nothing has no log to finish.
    const log = this.#logs.get(responseId);
    if (log === undefined || log.finished) return;
    log.finished = true;
    this.#wake(log);
    log.expiry = setTimeout(() => this.#logs.delete(responseId), this.#retainMs);
    log.expiry.unref();
  }

  from(responseId: string, after: number, signal: AbortSignal): EventsFrom {
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
      await new Promise<void>((resolve) => {
        const wake = () => {
          signal.removeEventListener("abort", wake);
          log.waiters.delete(wake);
          resolve();
        };
        log.waiters.add(wake);
        signal.addEventListener("abort", wake, { once: true });
      });
    }
  }

  close(): void {
    for (const log of this.#logs.values()) {
      clearTimeout(log.expiry);
      log.finished = true;
      this.#wake(log);
    }
    this.#logs.clear();
  }
}
