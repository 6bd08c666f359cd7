import type { Redis } from "ioredis";
import { firstConnect } from "../coordination/first-connect.js";
import { protocolJson } from "../runs/agent/agent-graph.js";
import type { LoggedProtocolEvent, Matcher, ProtocolEvent, ProtocolFilter, ProtocolLogs, ThreadLog } from "../runs/agent/protocol-log.js";
import { withDeadline } from "../util/deadline.js";

/** How long a follower waits on Redis before it looks at its signal again. */
const BLOCK_MS = 1_000;
/** How many entries one read takes. */
const BATCH = 500;

/**
 * Appends events to a thread's stream, each numbered after the stream's last (its id is
 * `seq-1`), in one step: two writers never take the same number. The stream keeps about
 * ARGV[1] entries and expires ARGV[2] ms after its last event. Returns the last `seq`.
 */
const APPEND = `
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local seq = 0
if #last > 0 then seq = tonumber(string.match(last[1][1], '^(%d+)')) end
for i = 3, #ARGV, 2 do
  seq = seq + 1
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], seq .. '-1', 'm', ARGV[i], 'p', ARGV[i + 1])
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return seq
`;

/** An entry of a thread's stream as the protocol's event, its JSON made once. */
function eventOf(id: string, fields: string[]): LoggedProtocolEvent {
  const seq = Number(id.split("-")[0]);
  const method = fields[1] ?? "";
  const params = fields[3] ?? "{}";
  const event: ProtocolEvent = {
    type: "event",
    seq,
    event_id: String(seq),
    method,
    params: JSON.parse(params) as ProtocolEvent["params"],
  };
  return { event, json: `{"type":"event","seq":${seq},"event_id":"${seq}","method":${JSON.stringify(method)},"params":${params}}` };
}

/**
 * Protocol v2's thread logs in Redis Streams, one stream per thread: the worker that runs a
 * protocol run appends its events, any process replays and follows them (a blocking read on a
 * connection of the follower's own, closed when it stops). Bounded in events per thread and
 * expiring `retainMs` after a thread's last event.
 */
export class RedisProtocolLogs implements ProtocolLogs {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #timeoutMs: number;
  readonly #eventsPerThread: number;
  readonly #retainMs: number;
  readonly #warn: (error: unknown) => void;
  /** The followers' own connections, each closed when its follower stops. */
  readonly #readers = new Set<Redis>();
  #closed = false;

  constructor(options: {
    redis: Redis;
    keyPrefix: string;
    timeoutMs: number;
    eventsPerThread?: number;
    retainMs?: number;
    /** Told once per log that could not write (its events are lost, never its run). */
    warn?: (error: unknown) => void;
  }) {
    this.#redis = options.redis;
    this.#prefix = options.keyPrefix;
    this.#timeoutMs = options.timeoutMs;
    this.#eventsPerThread = options.eventsPerThread ?? 10_000;
    this.#retainMs = options.retainMs ?? 24 * 60 * 60 * 1000;
    this.#warn = options.warn ?? (() => {});
  }

  /** A call under the log's deadline, once the connection has made its first connect. */
  async #call<T>(operation: () => Promise<T>): Promise<T> {
    await firstConnect(this.#redis, this.#timeoutMs);
    return withDeadline("the protocol's thread log", this.#timeoutMs, operation());
  }

  log(scope: string, threadId: string): ThreadLog {
    // The scope's length first, so that no two (scope, thread) pairs meet in one key.
    return new RedisThreadLog(this, `${this.#prefix}:protocol-events:${scope.length}:${scope}:${threadId}`);
  }

  /** Appends `[method, params JSON]` pairs to a thread's stream. */
  append(key: string, entries: string[]): Promise<unknown> {
    return this.#call(() => this.#redis.eval(APPEND, 1, key, String(this.#eventsPerThread), String(this.#retainMs), ...entries));
  }

  async last(key: string): Promise<number> {
    const [entry] = await this.#call(() => this.#redis.xrevrange(key, "+", "-", "COUNT", 1));
    return entry === undefined ? 0 : Number(entry[0].split("-")[0]);
  }

  async logged(key: string, after: number): Promise<{ events: LoggedProtocolEvent[]; seq: number }> {
    const entries = await this.#call(() => this.#redis.xrange(key, `(${after}-1`, "+"));
    const events = entries.map(([id, fields]) => eventOf(id, fields));
    return { events, seq: events.at(-1)?.event.seq ?? (await this.last(key)) };
  }

  async *follow(key: string, filter: ProtocolFilter, matches: Matcher, signal: AbortSignal): AsyncGenerator<LoggedProtocolEvent> {
    if (this.#closed) return;
    const reader = this.#redis.duplicate({
      connectionName: "chat-serve-protocol-follower",
      maxRetriesPerRequest: 1,
      enableOfflineQueue: true,
    });
    reader.on("error", () => {});
    this.#readers.add(reader);
    const leave = () => reader.disconnect();
    signal.addEventListener("abort", leave, { once: true });
    // Reads are exclusive of the id given: after event N is after `N-1`.
    let cursor = `${filter.since ?? 0}-1`;
    try {
      for (;;) {
        if (signal.aborted || this.#closed) return;
        const read = await reader.xread("COUNT", BATCH, "BLOCK", BLOCK_MS, "STREAMS", key, cursor).catch((error: unknown) => {
          if (signal.aborted || this.#closed) return null;
          throw error;
        });
        if (read === null) continue;
        for (const [, entries] of read) {
          for (const [id, fields] of entries) {
            cursor = id;
            const logged = eventOf(id, fields);
            if (matches(logged.event, filter)) yield logged;
          }
        }
      }
    } finally {
      signal.removeEventListener("abort", leave);
      this.#readers.delete(reader);
      reader.disconnect();
    }
  }

  warn(error: unknown): void {
    this.#warn(error);
  }

  /** Ends every follower (their streams end; the clients can follow again elsewhere). */
  close(): void {
    this.#closed = true;
    for (const reader of this.#readers) reader.disconnect();
    this.#readers.clear();
  }

  /** How many follower connections are open (for the tests that count what is left). */
  get followers(): number {
    return this.#readers.size;
  }
}

/**
 * One thread's log as a run writes it: its events go out in order, what comes while a write is
 * out in the next one. A write that fails loses those events (warned once), never the run.
 */
class RedisThreadLog implements ThreadLog {
  readonly #logs: RedisProtocolLogs;
  readonly #key: string;
  #pending: string[] = [];
  #writing: Promise<void> | undefined;
  #failed = false;

  constructor(logs: RedisProtocolLogs, key: string) {
    this.#logs = logs;
    this.#key = key;
  }

  push(method: string, namespace: string[], data: unknown, node?: string): void {
    const params = protocolJson({ namespace, timestamp: Date.now(), ...(node === undefined ? {} : { node }), data });
    this.#pending.push(method === "input" ? "input.requested" : method, params);
    this.#writing ??= this.#drain();
  }

  async #drain(): Promise<void> {
    while (this.#pending.length > 0) {
      const batch = this.#pending;
      this.#pending = [];
      await this.#logs.append(this.#key, batch).catch((error: unknown) => {
        if (!this.#failed) this.#logs.warn(error);
        this.#failed = true;
      });
    }
    this.#writing = undefined;
  }

  async flush(): Promise<void> {
    while (this.#writing !== undefined) await this.#writing;
  }

  last(): Promise<number> {
    return this.#logs.last(this.#key);
  }

  logged(after: number): Promise<{ events: readonly LoggedProtocolEvent[]; seq: number }> {
    return this.#logs.logged(this.#key, after);
  }

  follow(filter: ProtocolFilter, matches: Matcher, signal: AbortSignal): AsyncGenerator<LoggedProtocolEvent> {
    return this.#logs.follow(this.#key, filter, matches, signal);
  }

  /** Nothing to hold: the stream lives in Redis, bounded and expiring on its own. */
  hold(): () => void {
    return () => {};
  }
}
