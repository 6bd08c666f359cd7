import { Wakeup } from "../../util/wakeup.js";
import { protocolJson } from "./agent-graph.js";

/** An event of LangGraph's streaming protocol (v2), as `streamEvents(…, { version: "v3" })` makes them. */
export interface ProtocolEvent {
  type: "event";
  seq: number;
  event_id: string;
  method: string;
  params: { namespace: string[]; timestamp: number; node?: string; data: unknown };
}

/** What a client follows on a thread: channels, namespaces (prefixes, with a depth below them) and where to start. */
export interface ProtocolFilter {
  channels: string[];
  namespaces?: string[][];
  depth?: number;
  /** Only events after this `seq`. */
  since?: number;
}

/** One logged event: the event (for filters) and its JSON, made once. */
export interface LoggedProtocolEvent {
  event: ProtocolEvent;
  json: string;
}

type Matcher = (event: ProtocolEvent, filter: ProtocolFilter) => boolean;

/**
 * The protocol events of one thread, across its runs, numbered by `seq` from 1: what every
 * `stream/events` connection of the thread replays (after its `since`) and then follows. Keeps
 * at least the last `capacity` events (a tenth more before the oldest go); followers end when
 * the log is closed.
 */
export class ProtocolLog {
  readonly #events: LoggedProtocolEvent[] = [];
  readonly #capacity: number;
  #seq = 0;
  #closed = false;
  readonly #wakeup = new Wakeup();
  /** Followers right now: a thread with any is not forgotten. */
  followers = 0;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  /** The `seq` of the last event (0 before the first). */
  get seq(): number {
    return this.#seq;
  }

  /** Adds an event on `method` (`input` is written `input.requested`), numbered next. */
  push(method: string, namespace: string[], data: unknown, node?: string): ProtocolEvent {
    this.#seq += 1;
    const event: ProtocolEvent = {
      type: "event",
      seq: this.#seq,
      event_id: String(this.#seq),
      method: method === "input" ? "input.requested" : method,
      params: { namespace, timestamp: Date.now(), ...(node === undefined ? {} : { node }), data },
    };
    this.#events.push({ event, json: protocolJson(event) });
    // The oldest go a tenth of the capacity at a time, not one per event.
    if (this.#events.length > this.#capacity + Math.ceil(this.#capacity / 10)) this.#events.splice(0, this.#events.length - this.#capacity);
    this.#wakeup.signal();
    return event;
  }

  /** The logged events after `after`, now (the oldest kept first): a replay that nothing can interleave. */
  logged(after: number): readonly LoggedProtocolEvent[] {
    const first = this.#events[0]?.event.seq ?? after + 1;
    return this.#events.slice(Math.max(0, after + 1 - first));
  }

  /** Ends every follower (the server is closing, or the thread was forgotten). */
  close(): void {
    this.#closed = true;
    this.#wakeup.signal();
  }

  /**
   * The logged events that match `filter` (after its `since`), then each new one, until `signal`
   * fires or the log is closed. A protocol stream has no end of its own: runs come and go on
   * the thread while a client follows it.
   */
  async *follow(filter: ProtocolFilter, matches: Matcher, signal: AbortSignal): AsyncGenerator<LoggedProtocolEvent> {
    let after = filter.since ?? 0;
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<void>((resolve) => {
      onAbort = () => resolve();
      signal.addEventListener("abort", onAbort, { once: true });
    });
    this.followers += 1;
    try {
      for (;;) {
        // The log is in `seq` order with no gaps: the next event is found by index (again after
        // each yield, since the oldest events may have gone meanwhile).
        const first = this.#events[0]?.event.seq ?? after + 1;
        const logged = this.#events[Math.max(0, after + 1 - first)];
        if (logged !== undefined) {
          after = logged.event.seq;
          if (matches(logged.event, filter)) yield logged;
          continue;
        }
        if (this.#closed || signal.aborted) return;
        await Promise.race([this.#wakeup.next(), aborted]);
      }
    } finally {
      this.followers -= 1;
      if (onAbort !== undefined) signal.removeEventListener("abort", onAbort);
    }
  }
}
