import { FairMap } from "../../util/fair-share.js";
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

export type Matcher = (event: ProtocolEvent, filter: ProtocolFilter) => boolean;

/**
 * The protocol events of one thread, across its runs, numbered by `seq` from 1: in this
 * process's memory (`ProtocolLog`), or in Redis for a deployment of several processes, where
 * the run's worker writes them and any process replays and follows them.
 */
export interface ThreadLog {
  /** Adds an event on `method` (`input` is written `input.requested`), numbered next; written in order. */
  push(method: string, namespace: string[], data: unknown, node?: string): void;
  /** Waits for every event pushed so far to be written. */
  flush(): Promise<void>;
  /** The `seq` of the last event (0 before the first). */
  last(): Promise<number>;
  /** The logged events after `after` (the oldest kept first), and the `seq` of the last. */
  logged(after: number): Promise<{ events: readonly LoggedProtocolEvent[]; seq: number }>;
  /** The logged events that match `filter` (after its `since`), then each new one, until `signal` fires or the logs close. */
  follow(filter: ProtocolFilter, matches: Matcher, signal: AbortSignal): AsyncGenerator<LoggedProtocolEvent>;
  /** A run writes to the log until the returned function is called: a log in use is not forgotten. */
  hold(): () => void;
}

/** Every thread's protocol log: this process's, or the deployment's. */
export interface ProtocolLogs {
  log(scope: string, threadId: string): ThreadLog;
  /** Ends every follower: the server is closing. */
  close(): void | Promise<void>;
}

/**
 * The protocol events of one thread, across its runs, numbered by `seq` from 1: what every
 * `stream/events` connection of the thread replays (after its `since`) and then follows. Keeps
 * at least the last `capacity` events (a tenth more before the oldest go); followers end when
 * the log is closed.
 */
class ProtocolLog implements ThreadLog {
  /** The tenant whose thread it is: what the cap's fair eviction counts by. */
  readonly scope: string;
  readonly #events: LoggedProtocolEvent[] = [];
  readonly #capacity: number;
  #seq = 0;
  #closed = false;
  readonly #wakeup = new Wakeup();
  /** Followers right now: a thread with any is not forgotten. */
  followers = 0;
  /** Runs writing to it right now: a log in use is not forgotten either. */
  writers = 0;

  constructor(scope: string, capacity: number) {
    this.scope = scope;
    this.#capacity = capacity;
  }

  async last(): Promise<number> {
    return this.#seq;
  }

  async flush(): Promise<void> {}

  hold(): () => void {
    this.writers += 1;
    let held = true;
    return () => {
      if (held) this.writers -= 1;
      held = false;
    };
  }

  /** Adds an event on `method` (`input` is written `input.requested`), numbered next. */
  push(method: string, namespace: string[], data: unknown, node?: string): void {
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
  }

  async logged(after: number): Promise<{ events: readonly LoggedProtocolEvent[]; seq: number }> {
    const first = this.#events[0]?.event.seq ?? after + 1;
    return { events: this.#events.slice(Math.max(0, after + 1 - first)), seq: this.#seq };
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

/**
 * The thread logs of this process, bounded in events per thread and in threads: past
 * `maxThreads`, the tenant holding the most forgets its least recently used log that nobody
 * follows and no run writes (never the one just asked for).
 */
export class MemoryProtocolLogs implements ProtocolLogs {
  #logs = new FairMap<ProtocolLog>((log) => log.scope);
  readonly #maxThreads: number;
  readonly #eventsPerThread: number;

  constructor(options: { maxThreads?: number; eventsPerThread?: number } = {}) {
    this.#maxThreads = options.maxThreads ?? 1_000;
    this.#eventsPerThread = options.eventsPerThread ?? 10_000;
  }

  log(scope: string, threadId: string): ProtocolLog {
    const key = `${scope}\u0000${threadId}`;
    const log = this.#logs.get(key) ?? new ProtocolLog(scope, this.#eventsPerThread);
    this.#logs.set(key, log);
    const busy = (other: ProtocolLog) => other === log || other.followers > 0 || other.writers > 0;
    for (const [, forgotten] of this.#logs.evictOver(this.#maxThreads, busy)) forgotten.close();
    return log;
  }

  close(): void {
    for (const log of this.#logs.values()) log.close();
    this.#logs = new FairMap<ProtocolLog>((log) => log.scope);
  }
}
