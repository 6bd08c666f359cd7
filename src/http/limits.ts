import { randomUUID } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Redis } from "ioredis";
import { once } from "../coordination/run-coordinator.js";
import { RateLimitExceededError } from "../errors/catalogue.js";

/** One limit: requests per window and runs in flight. */
export interface Limit {
  requestsPerMinute?: number;
  concurrentRuns?: number;
}

/**
 * Per-tenant limits (per client address without `auth`). A model of `perModel` has limits
 * and counters of its own; the others share the tenant's.
 */
export interface LimitSettings extends Limit {
  perModel?: Record<string, Limit>;
  /** The request window in ms (default 60 000, so `requestsPerMinute` means what it says). */
  windowMs?: number;
  /** With a client, the counters live in Redis and every process sharing it shares one limit. */
  redis?: Redis;
  /** Prefix of the Redis keys. Default `chat-serve:limits:`. */
  keyPrefix?: string;
}

/** What a request must release when its run ends: its concurrent-run slot. */
export type Admission = () => Promise<void>;

/** Slots of concurrent runs per key: taken before a run, given back after it. */
interface Slots {
  /** A release function, or null when all `max` slots are taken. */
  take(key: string, max: number): Promise<Admission | null>;
}

class MemorySlots implements Slots {
  readonly #taken = new Map<string, number>();

  async take(key: string, max: number): Promise<Admission | null> {
    const taken = this.#taken.get(key) ?? 0;
    if (taken >= max) return null;
    this.#taken.set(key, taken + 1);
    return once(async () => {
      const left = (this.#taken.get(key) ?? 1) - 1;
      if (left === 0) this.#taken.delete(key);
      else this.#taken.set(key, left);
    });
  }
}

// A sorted set of slot holders scored by their expiry (Redis time): expired holders (a crashed
// process) are dropped, then a slot is taken if one is free.
const TAKE_SLOT = `
local now = redis.call("TIME")
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", nowMs)
if redis.call("ZCARD", KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call("ZADD", KEYS[1], nowMs + tonumber(ARGV[3]), ARGV[1])
redis.call("PEXPIRE", KEYS[1], ARGV[3])
return 1`;
const RENEW_SLOT = `
local now = redis.call("TIME")
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local renewed = redis.call("ZADD", KEYS[1], "XX", "CH", nowMs + tonumber(ARGV[2]), ARGV[1])
redis.call("PEXPIRE", KEYS[1], ARGV[2])
return renewed`;

/** How long a slot outlives a holder that stopped renewing it (a crashed process). */
const SLOT_TTL_MS = 30_000;

class RedisSlots implements Slots {
  readonly #redis: Redis;
  readonly #prefix: string;

  constructor(redis: Redis, prefix: string) {
    this.#redis = redis;
    this.#prefix = prefix;
  }

  async take(key: string, max: number): Promise<Admission | null> {
    const redisKey = `${this.#prefix}runs:${key}`;
    const holder = randomUUID();
    const taken = await this.#redis.eval(TAKE_SLOT, 1, redisKey, holder, String(max), String(SLOT_TTL_MS));
    if (taken !== 1) return null;
    // The slot is renewed while the run lives; one timer, cleared on release.
    const timer = setInterval(() => {
      this.#redis.eval(RENEW_SLOT, 1, redisKey, holder, String(SLOT_TTL_MS)).catch(() => {});
    }, SLOT_TTL_MS / 3);
    timer.unref();
    return once(async () => {
      clearInterval(timer);
      // Unreachable Redis: the slot expires by itself.
      await this.#redis.zrem(redisKey, holder).catch(() => {});
    });
  }
}

type Limiter = (request: FastifyRequest) => Promise<{
  isAllowed: boolean;
  max?: number;
  remaining?: number;
  ttlInSeconds?: number;
  isExceeded?: boolean;
}>;

/**
 * Request rates (counted by `@fastify/rate-limit`, in memory or in Redis) and concurrent runs
 * per tenant and, where configured, per model. Answers over a limit with 429
 * `rate_limit_exceeded`, `Retry-After` and OpenAI's `x-ratelimit-*-requests` headers.
 */
export class RunLimits {
  readonly #settings: LimitSettings;
  readonly #slots: Slots;
  #limiter: Limiter | undefined;
  /** The model each admitted request runs, for the counters: a surface's body may name it otherwise (an assistant). */
  readonly #models = new WeakMap<FastifyRequest, string>();

  constructor(settings: LimitSettings) {
    this.#settings = settings;
    const prefix = settings.keyPrefix ?? "chat-serve:limits:";
    this.#slots = settings.redis === undefined ? new MemorySlots() : new RedisSlots(settings.redis, prefix);
  }

  /** Models `perModel` names, for checking them against the registry. */
  get namedModels(): string[] {
    return Object.keys(this.#settings.perModel ?? {});
  }

  /** The limit a request for `model` counts against, and the counter it counts in. */
  #limitOf(model: string): { limit: Limit; bucket: string } {
    const own = this.#settings.perModel?.[model];
    return {
      limit: { ...(this.#settings as Limit), ...own },
      bucket: own === undefined ? "*" : `model:${model}`,
    };
  }

  static #tenantOf(request: FastifyRequest): string {
    const tenant = request.chatServeCaller?.tenant;
    return tenant === undefined ? `address:${request.ip}` : `tenant:${tenant}`;
  }

  /** Registers the counters on the mounted app, before `admit`; later mounts share them. */
  async register(app: FastifyInstance): Promise<void> {
    // A second mount (the chat-ui profile) shares the first one's counters.
    if (this.#limiter !== undefined) return;
    const settings = this.#settings;
    const modelOf = (request: FastifyRequest) => this.#models.get(request) ?? (request.body as { model?: unknown } | undefined)?.model;
    const keyOf = (request: FastifyRequest) => {
      const model = modelOf(request);
      return `${RunLimits.#tenantOf(request)}|${this.#limitOf(typeof model === "string" ? model : "").bucket}`;
    };
    // Loaded only when limits are configured.
    const { default: rateLimit } = await import("@fastify/rate-limit");
    await app.register(rateLimit, {
      // Counted only where `admit` asks, once the body (and so the model) is known.
      global: false,
      timeWindow: settings.windowMs ?? 60_000,
      max: (request) => {
        const model = modelOf(request);
        return this.#limitOf(typeof model === "string" ? model : "").limit.requestsPerMinute ?? Number.MAX_SAFE_INTEGER;
      },
      keyGenerator: keyOf,
      ...(settings.redis === undefined
        ? {}
        : { redis: settings.redis, nameSpace: `${settings.keyPrefix ?? "chat-serve:limits:"}requests:` }),
    });
    this.#limiter = (app as unknown as { createRateLimit(): Limiter }).createRateLimit();
  }

  /**
   * Counts the request against its limits; throws 429 when it is over one. The returned
   * function gives back its concurrent-run slot; call it when the run has ended. Without a
   * reply (a WebSocket's command), a refusal carries no rate-limit headers.
   */
  async admit(request: FastifyRequest, reply: FastifyReply | undefined, model: string): Promise<Admission> {
    this.#models.set(request, model);
    const { limit, bucket } = this.#limitOf(model);
    const subject = bucket === "*" ? "requests" : `requests on model '${model}'`;
    if (limit.requestsPerMinute !== undefined) {
      let result: Awaited<ReturnType<Limiter>> | undefined;
      try {
        result = await this.#limiter!(request);
      } catch (error) {
        // The counters' store (Redis) is unreachable: serve rather than refuse everyone.
        request.log.warn({ err: error }, "the rate-limit counters could not be reached; the request is let through");
      }
      if (result !== undefined && !result.isAllowed) {
        const resetSeconds = Math.max(1, result.ttlInSeconds ?? 1);
        reply?.header("x-ratelimit-limit-requests", String(result.max));
        reply?.header("x-ratelimit-remaining-requests", String(result.remaining ?? 0));
        reply?.header("x-ratelimit-reset-requests", `${resetSeconds}s`);
        if (result.isExceeded === true) {
          const window = (this.#settings.windowMs ?? 60_000) === 60_000 ? "per minute" : `per ${(this.#settings.windowMs ?? 0) / 1000}s`;
          throw new RateLimitExceededError(
            `Rate limit reached for ${subject}: ${result.max} ${window}. Retry in ${resetSeconds}s.`,
            resetSeconds,
          );
        }
      }
    }
    if (limit.concurrentRuns === undefined) return async () => {};
    let slot: Admission | null;
    try {
      slot = await this.#slots.take(`${RunLimits.#tenantOf(request)}|${bucket}`, limit.concurrentRuns);
    } catch (error) {
      request.log.warn({ err: error }, "the concurrent-run counters could not be reached; the request is let through");
      return async () => {};
    }
    if (slot === null) {
      throw new RateLimitExceededError(
        `Too many runs in flight for ${bucket === "*" ? "this tenant" : `model '${model}'`}: at most ${limit.concurrentRuns} at once. Retry when one has finished.`,
        1,
      );
    }
    return slot;
  }
}
