import { randomUUID } from "node:crypto";
import { after } from "node:test";
import { Redis } from "ioredis";
import pg from "pg";

export const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
export const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";

async function reachable(check: () => Promise<void>): Promise<boolean> {
  try {
    await check();
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether a test needing a service runs. Missing service: with CI=true the test file fails
 * (CI must not pass by skipping); elsewhere the tests skip with a one-line reason.
 */
async function requireService(name: string, url: string, check: () => Promise<void>): Promise<{ skip: string | false }> {
  if (await reachable(check)) return { skip: false };
  const reason = `${name} is not reachable at ${url} (start it, or set TEST_${name.toUpperCase()}_URL)`;
  if (process.env.CI === "true") throw new Error(`CI=true and ${reason}`);
  return { skip: reason };
}

export function requireRedis(): Promise<{ skip: string | false }> {
  return requireService("redis", REDIS_URL, async () => {
    const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, connectTimeout: 2_000 });
    redis.on("error", () => {});
    try {
      await redis.connect();
      await redis.ping();
    } finally {
      redis.disconnect();
    }
  });
}

export function requirePostgres(): Promise<{ skip: string | false }> {
  return requireService("postgres", POSTGRES_URL, async () => {
    const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2_000 });
    await client.connect();
    await client.end();
  });
}

/** A schema name of its own for one test run, so runs never collide. */
export function uniqueSchema(): string {
  return `cs_test_${randomUUID().replaceAll("-", "").slice(0, 16)}`;
}

/** A Redis key prefix of its own for one test run. */
export function uniquePrefix(): string {
  return `chat-serve-test:${randomUUID()}:`;
}

export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

/** Skips (or, with CI=true, fails) unless both Redis and Postgres answer: the skip reason, or false. */
export async function requireRedisAndPostgres(): Promise<string | false> {
  const redis = await requireRedis();
  const postgres = await requirePostgres();
  return redis.skip || postgres.skip;
}

/** Cleanups a test file registers as it goes, run in reverse order after its last test. */
export function cleanupsAfterAll(): (() => Promise<void> | void)[] {
  const cleanups: (() => Promise<void> | void)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });
  return cleanups;
}
