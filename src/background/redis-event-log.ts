import type { Redis } from "ioredis";
import { firstConnect } from "../coordination/first-connect.js";
import type { BackgroundEventLog, EventsFrom } from "../runs/jobs.js";
import { withDeadline } from "../util/deadline.js";
import type { ResponseStreamEvent } from "../wire/responses-response.js";

/** How long a follower waits on Redis before it looks at its signal and the key again. */
const BLOCK_MS = 1_000;
/** How many entries one read takes. */
const BATCH = 200;
/** Follower connections kept open for the next follower once theirs ended with its log. */
const IDLE_READERS = 8;
/** A run's log lives this long after its last event while the run goes on. */
const RUNNING_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * Entry ids: event number N is `N-1`; the end of a log after event N is `N-2`. Redis keeps a
 * stream's ids increasing, so an event logged twice (a second worker numbering from the same
 * place) is refused rather than repeated.
 */
function position(id: string): { sequence: number; end: boolean } {
  const [sequence, kind] = id.split("-");
  return { sequence: Number(sequence), end: kind === "2" };
}

/**
 * The events of background responses in Redis Streams, one stream per response: any process
 * of the deployment replays them and follows the live ones (a blocking read on a connection
 * of the follower's own, closed when it stops). Kept for `retainMs` after the response ends.
 */
export class RedisEventLog<E = ResponseStreamEvent> implements BackgroundEventLog<E> {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #stream: string;
  readonly #sequenceOf: (event: E) => number;
  readonly #retainMs: number;
  readonly #timeoutMs: number;
  /** The followers' own connections, each closed when its follower stops. */
  readonly #readers = new Set<Redis>();
  /** Connections of followers that ended with their log, ready for the next (no connect per stream). */
  readonly #idle: Redis[] = [];
  #closed = false;

  constructor(options: {
    redis: Redis;
    keyPrefix: string;
    retainMs?: number;
    timeoutMs: number;
    /** The key's middle part (default `background-events`). */
    stream?: string;
    /** An event's place in its log (default: a Responses event's `sequence_number`). */
    sequenceOf?: (event: E) => number;
  }) {
    this.#redis = options.redis;
    this.#prefix = options.keyPrefix;
    this.#stream = options.stream ?? "background-events";
    this.#sequenceOf = options.sequenceOf ?? ((event) => (event as ResponseStreamEvent).sequence_number);
    this.#retainMs = options.retainMs ?? 600_000;
    this.#timeoutMs = options.timeoutMs;
  }

  #key(responseId: string): string {
    return `${this.#prefix}:${this.#stream}:${responseId}`;
  }

  /**
   * A call under the log's deadline. Its connection answers at once or fails (no offline
   * queue); one still making its first connection (a server's first moments) is waited for,
   * within the deadline. A connection lost later fails the call at once, as before.
   */
  async #call<T>(operation: () => Promise<T>): Promise<T> {
    await firstConnect(this.#redis, this.#timeoutMs);
    return withDeadline("the background event log", this.#timeoutMs, operation());
  }

  async append(responseId: string, events: readonly E[]): Promise<void> {
    if (events.length === 0) return;
    const key = this.#key(responseId);
    const batch = this.#redis.multi();
    for (const event of events) batch.xadd(key, `${this.#sequenceOf(event)}-1`, "e", JSON.stringify(event));
    batch.pexpire(key, RUNNING_TTL_MS);
    const results = await this.#call(() => batch.exec());
    const failed = results?.find(([error]) => error !== null);
    if (failed !== undefined) throw failed[0];
  }

  /** The last entry's place, or undefined for a response with no log. */
  async #tail(responseId: string): Promise<{ sequence: number; end: boolean } | undefined> {
    const [entry] = await this.#call(() => this.#redis.xrevrange(this.#key(responseId), "+", "-", "COUNT", 1));
    return entry === undefined ? undefined : position(entry[0]);
  }

  async last(responseId: string): Promise<number> {
    return (await this.#tail(responseId))?.sequence ?? -1;
  }

  async finish(responseId: string): Promise<void> {
    const tail = await this.#tail(responseId);
    if (tail === undefined || tail.end) return;
    const key = this.#key(responseId);
    await this.#call(() => this.#redis.multi().xadd(key, `${tail.sequence}-2`, "end", "1").pexpire(key, this.#retainMs).exec());
  }

  async from(responseId: string, after: number, signal: AbortSignal): Promise<EventsFrom<E>> {
    const tail = await this.#tail(responseId);
    if (tail === undefined) return { kind: "unknown" };
    if (tail.end && after >= tail.sequence) return { kind: "past-end", last: tail.sequence };
    return { kind: "events", events: this.#follow(responseId, after, signal) };
  }

  async *#follow(responseId: string, after: number, signal: AbortSignal): AsyncGenerator<E> {
    const key = this.#key(responseId);
    const reader =
      this.#idle.pop() ??
      this.#redis.duplicate({
        connectionName: "chat-serve-event-follower",
        maxRetriesPerRequest: 1,
        enableOfflineQueue: true,
      });
    this.#readers.add(reader);
    // Kept for the next follower when this one ends with its log (nothing is pending on it).
    let clean = false;
    // Leaving ends the blocking read at once: the connection goes.
    const leave = () => reader.disconnect();
    signal.addEventListener("abort", leave, { once: true });
    // Reads are exclusive of the id given: after event N is after `N-1`; every event is after `0-0`.
    let cursor = after < 0 ? "0-0" : `${after}-1`;
    try {
      for (;;) {
        if (signal.aborted) return;
        const read = await reader.xread("COUNT", BATCH, "BLOCK", BLOCK_MS, "STREAMS", key, cursor).catch((error: unknown) => {
          if (signal.aborted) return null;
          throw error;
        });
        if (read === null) {
          if (signal.aborted) return;
          // Nothing new: the log may have expired under a response whose worker died.
          if ((await this.#call(() => this.#redis.exists(key))) === 0) {
            clean = true;
            return;
          }
          continue;
        }
        for (const [, entries] of read) {
          for (const [id, fields] of entries) {
            cursor = id;
            if (position(id).end) {
              clean = true;
              return;
            }
            yield JSON.parse(fields[1]!) as E;
          }
        }
      }
    } finally {
      signal.removeEventListener("abort", leave);
      this.#readers.delete(reader);
      if (clean && !signal.aborted && !this.#closed && reader.status === "ready" && this.#idle.length < IDLE_READERS)
        this.#idle.push(reader);
      else reader.disconnect();
    }
  }

  /** Ends every follower (their streams end; the clients can reattach elsewhere). */
  async close(): Promise<void> {
    this.#closed = true;
    for (const reader of [...this.#readers, ...this.#idle]) reader.disconnect();
    this.#readers.clear();
    this.#idle.length = 0;
  }

  /** How many follower connections are open (for the tests that count what is left). */
  get followers(): number {
    return this.#readers.size;
  }
}
