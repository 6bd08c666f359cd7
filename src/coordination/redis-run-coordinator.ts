import { randomUUID } from "node:crypto";
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
    const acquired = await this.#redis.set(redisKey, token, "PX", ttlMs, "NX");
    if (acquired !== "OK") return null;
    const controller = new AbortController();
    const renew = async () => {
      try {
        const renewed = await this.#redis.eval(RENEW, 1, redisKey, token, String(ttlMs));
        if (renewed !== 1) controller.abort(new Error("the run's lease was taken by another holder"));
      } catch (error) {
        controller.abort(new Error("the run's lease could not be renewed", { cause: error }));
      }
      if (controller.signal.aborted) clearInterval(timer);
    };
    const timer = setInterval(() => void renew(), Math.max(100, Math.floor(ttlMs / 3)));
    timer.unref();
    return {
      key,
      signal: controller.signal,
      release: once(async () => {
        clearInterval(timer);
        try {
          await this.#redis.eval(RELEASE, 1, redisKey, token);
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
    await this.#redis.ping();
  }

  async close(): Promise<void> {
    if (this.#ownsClient) this.#redis.disconnect();
  }
}
