import { randomUUID } from "node:crypto";
import { once as onceEvent } from "node:events";
import { createRequire } from "node:module";
import type { Redis, RedisOptions } from "ioredis";
import { DEFAULT_BACKEND_TIMEOUT_MS } from "../util/deadline.js";
import { firstConnect } from "./first-connect.js";
import { once, type RunCoordinator, type RunLease } from "./run-coordinator.js";

// Renew and release only while the key still holds our token, atomically.
const RENEW = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("pexpire", KEYS[1], ARGV[2]) else return 0 end`;
const RELEASE = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`;

export interface RedisRunCoordinatorOptions {
  /** An ioredis client to use (it stays yours to close), or a URL to connect to. */
  redis?: Redis;
  url?: string;
  /** Lease lifetime; renewed every third of it while the run lives. Default 30 s. */
  leaseTtlMs?: number;
  /** Prefix of the lease keys. Default `chat-serve:lease:`. */
  keyPrefix?: string;
  /**
   * Deadline of every Redis command and of the first connection, for a client made from
   * `url` (a client you pass keeps its own settings). Default 2 s.
   */
  timeoutMs?: number;
}

/**
 * Leases in Redis, shared by every process and host that uses the same Redis: a lease is
 * `SET key token NX PX ttl`, renewed while the run lives and released by compare-and-delete.
 * A renewal that fails (Redis gone, or the key taken after expiry) aborts the run; a crashed
 * holder's key frees itself after the TTL.
 */
export class RedisRunCoordinator implements RunCoordinator {
  readonly #redis: Redis;
  readonly #ownsClient: boolean;
  readonly #ttlMs: number;
  readonly #prefix: string;
  readonly #timeoutMs: number;

  constructor(options: RedisRunCoordinatorOptions) {
    this.#ttlMs = options.leaseTtlMs ?? 30_000;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_BACKEND_TIMEOUT_MS;
    this.#prefix = options.keyPrefix ?? "chat-serve:lease:";
    if (options.redis !== undefined) {
      this.#redis = options.redis;
      this.#ownsClient = false;
    } else {
      if (options.url === undefined) throw new TypeError("RedisRunCoordinator needs a redis client or a url");
      const clientOptions: RedisOptions = {
        // Fail at once while disconnected instead of queueing: a request gets 503, not a hang.
        enableOfflineQueue: false,
        maxRetriesPerRequest: 1,
        connectTimeout: this.#timeoutMs,
        // A Redis that accepts connections but stopped answering (paused, overloaded) fails
        // each command after this, so no request waits on it.
        commandTimeout: this.#timeoutMs,
      };
      // ioredis loads here, not when the package is imported: a server without Redis never pays for it.
      const { Redis: RedisClient } = createRequire(import.meta.url)("ioredis") as typeof import("ioredis");
      this.#redis = new RedisClient(options.url, clientOptions);
      this.#ownsClient = true;
      // Connection errors surface on commands (as 503s); the client reconnects by itself.
      this.#redis.on("error", () => {});
    }
  }

  /**
   * Waits for the first connection (commands are not queued while disconnected). A client
   * that is reconnecting after an outage does not wait: its commands fail at once.
   */
  #connected(): Promise<void> {
    return firstConnect(this.#redis, this.#timeoutMs);
  }

  async tryAcquire(key: string, options: { ttlMs?: number } = {}): Promise<RunLease | null> {
    await this.#connected();
    const redisKey = `${this.#prefix}${key}`;
    const token = randomUUID();
    const ttlMs = Math.max(1_000, Math.min(options.ttlMs ?? this.#ttlMs, this.#ttlMs));
    // Tried again on a new connection when the first got no answer: the key may hold our token already.
    const acquired = await this.#command(
      () => this.#redis.set(redisKey, token, "PX", ttlMs, "NX"),
      async () =>
        (await this.#redis.set(redisKey, token, "PX", ttlMs, "NX")) ?? ((await this.#redis.get(redisKey)) === token ? "OK" : null),
    );
    if (acquired !== "OK") return null;
    const controller = new AbortController();
    const every = Math.max(100, Math.floor(ttlMs / 3));
    let renewedAt = Date.now();
    const renew = async () => {
      try {
        const renewed = await this.#command(() => this.#redis.eval(RENEW, 1, redisKey, token, String(ttlMs)));
        if (renewed !== 1) controller.abort(new Error("the run's lease was taken by another holder"));
        else renewedAt = Date.now();
      } catch (error) {
        // One renewal missed (a connection replaced meanwhile) leaves time for the next; the run
        // stops only when the next would come after the lease has expired.
        if (Date.now() + every >= renewedAt + ttlMs) controller.abort(new Error("the run's lease could not be renewed", { cause: error }));
      }
      if (controller.signal.aborted) clearInterval(timer);
    };
    const timer = setInterval(() => void renew(), every);
    timer.unref();
    return {
      key,
      signal: controller.signal,
      release: once(async () => {
        clearInterval(timer);
        try {
          await this.#command(() => this.#redis.eval(RELEASE, 1, redisKey, token));
        } catch {
          // Redis is unreachable: the key expires after its TTL.
        }
      }),
    };
  }

  /** The client, for other counters kept beside the leases (the rate limits). */
  get redis(): Redis {
    return this.#redis;
  }

  /** The prefix of this coordinator's keys; other counters go under it too. */
  get keyPrefix(): string {
    return this.#prefix;
  }

  async check(): Promise<void> {
    await this.#connected();
    await this.#command(
      () => this.#redis.ping(),
      () => this.#redis.ping(),
    );
  }

  /**
   * A command on the client. One that gets no answer leaves a connection that may have gone
   * stale without a word (a load balancer or a NAT forgot it): the client drops it and connects
   * again, so that no later command waits on it. With `again`, the first try gets half the
   * deadline, and `again` is tried once on the new connection if it is up within a quarter
   * more: the request that found the stale connection is answered. A Redis that is really down
   * fails both within the deadline.
   */
  async #command<T>(operation: () => Promise<T>, again?: () => Promise<T>): Promise<T> {
    if (again === undefined) {
      try {
        return await operation();
      } catch (error) {
        if (error instanceof Error && /Command timed out/u.test(error.message) && this.#redis.status === "ready") this.#dropConnection();
        throw error;
      }
    }
    let timer: NodeJS.Timeout | undefined;
    const silent = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), this.#timeoutMs / 2);
    });
    const first = operation().then((value) => ({ value }));
    try {
      const answered = await Promise.race([first, silent]);
      if (answered !== undefined) return answered.value;
    } finally {
      clearTimeout(timer);
    }
    // The first try goes on unheard (it fails when its connection goes, or answers late).
    first.catch(() => {});
    const reconnected = this.#readyWithin(this.#timeoutMs / 4);
    this.#dropConnection();
    if (!(await reconnected)) throw new Error("Redis did not answer, on its connection or on a new one.");
    return again();
  }

  /** Drops the connection at once (no goodbye a silent peer would never answer); the client connects again. */
  #dropConnection(): void {
    this.#redis.stream?.destroy();
  }

  /** Whether the client is connected again (its next `ready`) within `ms`. */
  async #readyWithin(ms: number): Promise<boolean> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), ms);
    try {
      await onceEvent(this.#redis, "ready", { signal: controller.signal });
      return true;
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    if (this.#ownsClient) this.#redis.disconnect();
  }
}
