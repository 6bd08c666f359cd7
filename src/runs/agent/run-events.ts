import { Wakeup } from "../../util/wakeup.js";
import { protocolJson } from "./agent-graph.js";

/** One event of a run as it goes on the wire: its id (its place, from 0), SSE name and data JSON. */
export interface LoggedEvent {
  id: number;
  event: string;
  json: string;
}

/**
 * The events of one run, in order, serialized once as they happen: every client following the
 * run (the one that started it, a join, a reconnect with `Last-Event-ID`) reads the same log.
 * A follower that reads nothing more waits on one promise; the log ends when the run does.
 */
export class RunEvents {
  readonly #events: LoggedEvent[] = [];
  #finished = false;
  readonly #wakeup = new Wakeup();
  /** The id of the first event here: a run taken over numbers its events after those logged before. */
  readonly #first: number;
  /** Told of each event as it is logged (the deployment's shared log). */
  readonly #tee: ((event: LoggedEvent) => void) | undefined;

  constructor(options: { first?: number; tee?: (event: LoggedEvent) => void } = {}) {
    this.#first = options.first ?? 0;
    this.#tee = options.tee;
  }

  /** Adds an event; its data is serialized now, as it is at this step (or was: `json`, written in turns by the caller). */
  push(event: string, data: unknown, json?: string): void {
    if (this.#finished) return;
    const logged = { id: this.#first + this.#events.length, event, json: json ?? protocolJson(data) ?? "null" };
    this.#events.push(logged);
    this.#tee?.(logged);
    this.#wakeup.signal();
  }

  /** No event follows: followers end after the last one. */
  finish(): void {
    this.#finished = true;
    this.#wakeup.signal();
  }

  get finished(): boolean {
    return this.#finished;
  }

  /**
   * The events after `after` (an event id; -1 for all of them), then each new one until the
   * run ends or `signal` fires.
   */
  async *follow(after: number, signal?: AbortSignal): AsyncGenerator<LoggedEvent> {
    let next = Math.max(0, after + 1 - this.#first);
    let onAbort: (() => void) | undefined;
    const aborted =
      signal === undefined
        ? undefined
        : new Promise<void>((resolve) => {
            onAbort = () => resolve();
            signal.addEventListener("abort", onAbort, { once: true });
          });
    try {
      for (;;) {
        while (next < this.#events.length) {
          yield this.#events[next] as LoggedEvent;
          next += 1;
        }
        if (this.#finished || signal?.aborted === true) return;
        await (aborted === undefined ? this.#wakeup.next() : Promise.race([this.#wakeup.next(), aborted]));
      }
    } finally {
      if (onAbort !== undefined) signal?.removeEventListener("abort", onAbort);
    }
  }

  /** The id of the last event; -1 before the first. */
  get last(): number {
    return this.#first + this.#events.length - 1;
  }
}
