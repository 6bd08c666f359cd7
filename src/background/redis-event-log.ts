import type { Redis } from "ioredis";
import { firstConnect } from "../coordination/first-connect.js";
import type { BackgroundEventLog, EventsFrom } from "../runs/jobs.js";
import { withDeadline } from "../util/deadline.js";
import type { ResponseStreamEvent } from "../wire/responses-response.js";
import { nextWake } from "./event-log.js";

/** How long a follower waits on Redis before it looks at its signal and the key again. */
const BLOCK_MS = 1_000;
/** How many entries one read takes. */
const BATCH = 200;
/** Follower connections kept open for the next follower once theirs ended with its log. */
const IDLE_READERS = 8;
/** A run's log lives this long after its last event while the run goes on. */
const RUNNING_TTL_MS = 24 * 60 * 60 * 1000;
/** A log this process writes has its expiry pushed back at most this often (not on every append). */
const EXPIRY_REFRESH_MS = 60 * 60 * 1000;

/**
 * A log this process writes now (its worker claimed it): the events it wrote since, once Redis
 * has them, so that followers here read them from memory instead of asking Redis. `broken`
 * sends them back to Redis (an append failed, or the writer let go without ending the log).
 */
interface LocalLog<E> {
  first: number;
  events: E[];
  ended: boolean;
  broken: boolean;
  waiters: Set<() => void>;
  expiresAfter: number;
}

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
  /** The logs this process writes now, by key. */
  readonly #local = new Map<string, LocalLog<E>>();
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
    const local = this.#local.get(key);
    // Not one transaction: Redis applies each XADD or refuses it alone either way.
    const batch = this.#redis.pipeline();
    for (const event of events) batch.xadd(key, `${this.#sequenceOf(event)}-1`, "e", JSON.stringify(event));
    const refresh = local === undefined || Date.now() > local.expiresAfter;
    if (refresh) batch.pexpire(key, RUNNING_TTL_MS);
    try {
      const results = await this.#call(() => batch.exec());
      const failed = results?.find(([error]) => error !== null);
      if (failed !== undefined) throw failed[0];
    } catch (error) {
      if (local !== undefined) this.#wake(local, "broken");
      throw error;
    }
    if (local === undefined || local.broken) return;
    if (refresh) local.expiresAfter = Date.now() + EXPIRY_REFRESH_MS;
    // In order after what it holds, or its followers go back to Redis.
    if (this.#sequenceOf(events[0]!) !== local.first + local.events.length) return this.#wake(local, "broken");
    local.events.push(...events);
    this.#wake(local);
  }

  /**
   * This process writes the log from `first` on (its worker took the run): followers here read
   * what it writes from memory, until `finish`, `release` or a failed append.
   */
  claim(responseId: string, first: number): void {
    const key = this.#key(responseId);
    const earlier = this.#local.get(key);
    if (earlier !== undefined) this.#wake(earlier, "broken");
    this.#local.set(key, { first, events: [], ended: false, broken: false, waiters: new Set(), expiresAfter: 0 });
  }

  /** This process no longer writes the log (its run goes on elsewhere): its followers go back to Redis. */
  release(responseId: string): void {
    const key = this.#key(responseId);
    const local = this.#local.get(key);
    if (local !== undefined) this.#wake(local, "broken");
  }

  #wake(local: LocalLog<E>, state?: "broken" | "ended"): void {
    if (state === "broken") local.broken = true;
    if (state === "ended") local.ended = true;
    if (state !== undefined) {
      for (const [key, entry] of this.#local) if (entry === local) this.#local.delete(key);
    }
    const waiters = [...local.waiters];
    local.waiters.clear();
    for (const wake of waiters) wake();
  }

  /** The last entry's place, or undefined for a response with no log. */
  async #tail(responseId: string): Promise<{ sequence: number; end: boolean } | undefined> {
    const [entry] = await this.#call(() => this.#redis.xrevrange(this.#key(responseId), "+", "-", "COUNT", 1));
    return entry === undefined ? undefined : position(entry[0]);
  }

  async last(responseId: string): Promise<number> {
    // A log this process writes holds what Redis holds of it, in memory.
    const local = this.#local.get(this.#key(responseId));
    if (local !== undefined && !local.broken) return local.first + local.events.length - 1;
    return (await this.#tail(responseId))?.sequence ?? -1;
  }

  async finish(responseId: string): Promise<void> {
    const key = this.#key(responseId);
    const local = this.#local.get(key);
    // A log written here ends after its last event written here; another's, after what Redis holds.
    const tail = local !== undefined ? { sequence: local.first + local.events.length - 1, end: false } : await this.#tail(responseId);
    if (tail === undefined || tail.end) return;
    try {
      await this.#call(() => this.#redis.multi().xadd(key, `${tail.sequence}-2`, "end", "1").pexpire(key, this.#retainMs).exec());
    } catch (error) {
      if (local !== undefined) this.#wake(local, "broken");
      throw error;
    }
    if (local !== undefined) this.#wake(local, "ended");
  }

  async from(responseId: string, after: number, signal: AbortSignal): Promise<EventsFrom<E>> {
    if (this.#covering(responseId, after) === undefined) {
      const tail = await this.#tail(responseId);
      if (tail === undefined) return { kind: "unknown" };
      if (tail.end && after >= tail.sequence) return { kind: "past-end", last: tail.sequence };
    }
    return { kind: "events", events: this.#follow(responseId, after, signal) };
  }

  /** The log this process writes, when it holds every event after `after`. */
  #covering(responseId: string, after: number): LocalLog<E> | undefined {
    const local = this.#local.get(this.#key(responseId));
    return local !== undefined && !local.broken && local.first <= after + 1 ? local : undefined;
  }

  /** The events after `after` from memory or from Redis, switching to memory once this process writes the log. */
  async *#follow(responseId: string, after: number, signal: AbortSignal): AsyncGenerator<E> {
    let cursor = after;
    for (;;) {
      // A closed log has no more to give (its followers end; their clients reattach elsewhere).
      if (this.#closed) return;
      const local = this.#covering(responseId, cursor);
      const next =
        local !== undefined ? yield* this.#followLocal(local, cursor, signal) : yield* this.#followRedis(responseId, cursor, signal);
      if (next === undefined) return;
      cursor = next;
    }
  }

  /** From memory: the place reached when the writer let go (the rest is in Redis), or undefined at the end. */
  async *#followLocal(local: LocalLog<E>, after: number, signal: AbortSignal): AsyncGenerator<E, number | undefined> {
    let next = after + 1;
    for (;;) {
      while (next - local.first < local.events.length) yield local.events[next++ - local.first]!;
      if (local.ended || signal.aborted) return undefined;
      if (local.broken) return next - 1;
      await nextWake(local.waiters, signal);
    }
  }

  /** From Redis: undefined at the end, or the place reached once this process writes the log (the rest from memory). */
  async *#followRedis(responseId: string, after: number, signal: AbortSignal): AsyncGenerator<E, number | undefined> {
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
        if (signal.aborted) return undefined;
        const read = await reader.xread("COUNT", BATCH, "BLOCK", BLOCK_MS, "STREAMS", key, cursor).catch((error: unknown) => {
          if (signal.aborted) return null;
          throw error;
        });
        if (read === null) {
          if (signal.aborted) return undefined;
          // Nothing new: the log may have expired under a response whose worker died.
          if ((await this.#call(() => this.#redis.exists(key))) === 0) {
            clean = true;
            return undefined;
          }
          continue;
        }
        for (const [, entries] of read) {
          for (const [id, fields] of entries) {
            cursor = id;
            if (position(id).end) {
              clean = true;
              return undefined;
            }
            yield JSON.parse(fields[1]!) as E;
          }
        }
        // This process writes the log now: the rest comes from memory.
        const reached = position(cursor).sequence;
        if (cursor !== "0-0" && this.#covering(responseId, reached) !== undefined) {
          clean = true;
          return reached;
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
    for (const local of [...this.#local.values()]) this.#wake(local, "ended");
    for (const reader of [...this.#readers, ...this.#idle]) reader.disconnect();
    this.#readers.clear();
    this.#idle.length = 0;
  }

  /** How many follower connections are open (for the tests that count what is left). */
  get followers(): number {
    return this.#readers.size;
  }
}
