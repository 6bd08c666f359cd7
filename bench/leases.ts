// Lease acquire + release for the Redis and Postgres coordinators, against the bare round
// trips they are built on (Redis PING; Postgres SELECT 1 on a pooled connection), one at a
// time, in alternating rounds. Needs the services of the test suite (TEST_REDIS_URL,
// TEST_POSTGRES_URL); a coordinator whose service does not answer is left out with a note.

import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { createPostgresPool } from "../src/coordination/postgres-pool.js";
import { PostgresRunCoordinator } from "../src/coordination/postgres-run-coordinator.js";
import { RedisRunCoordinator } from "../src/coordination/redis-run-coordinator.js";
import type { RunCoordinator } from "../src/coordination/run-coordinator.js";
import { median } from "./lib/load.js";
import { fixed, type Row, row } from "./lib/results.js";

const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const PER_ROUND = Number(process.env.BENCH_CALLS ?? 500);

/** Microseconds per call, one call at a time. */
async function perCall(call: () => Promise<void>): Promise<number> {
  for (let index = 0; index < 50; index += 1) await call();
  const started = performance.now();
  for (let index = 0; index < PER_ROUND; index += 1) await call();
  return ((performance.now() - started) / PER_ROUND) * 1000;
}

const leaseCycle = (coordinator: RunCoordinator) => async () => {
  const lease = await coordinator.tryAcquire(`bench:${randomUUID()}`);
  if (lease === null) throw new Error("a fresh key was busy");
  await lease.release();
};

async function compareCalls(name: string, floor: string, bare: () => Promise<void>, lease: () => Promise<void>): Promise<Row> {
  const bareTimes: number[] = [];
  const leaseTimes: number[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    if (round % 2 === 0) {
      bareTimes.push(await perCall(bare));
      leaseTimes.push(await perCall(lease));
    } else {
      leaseTimes.push(await perCall(lease));
      bareTimes.push(await perCall(bare));
    }
  }
  return row(
    "leases, one at a time",
    `${name}: acquire + release vs ${floor}`,
    `${fixed(median(leaseTimes), 0)} µs`,
    `${fixed(median(bareTimes), 0)} µs`,
    median(leaseTimes) / median(bareTimes),
  );
}

export async function leases(): Promise<{ rows: Row[]; notes: string[] }> {
  const rows: Row[] = [];
  const notes: string[] = [];
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 2_000 });
  try {
    await redis.connect();
    const coordinator = new RedisRunCoordinator({ url: REDIS_URL, keyPrefix: `chat-serve-bench:${randomUUID()}:` });
    rows.push(await compareCalls("Redis", "PING", async () => void (await redis.ping()), leaseCycle(coordinator)));
    await coordinator.close();
  } catch (error) {
    notes.push(`Redis leases left out: ${(error as Error).message} (${REDIS_URL})`);
  } finally {
    redis.disconnect();
  }
  const pool = createPostgresPool({ url: POSTGRES_URL, max: 4, timeoutMs: 2_000 });
  try {
    await pool.query("SELECT 1");
    const coordinator = new PostgresRunCoordinator({ pool, maxConcurrentLeases: 2 });
    rows.push(await compareCalls("Postgres", "SELECT 1", async () => void (await pool.query("SELECT 1")), leaseCycle(coordinator)));
  } catch (error) {
    notes.push(`Postgres leases left out: ${(error as Error).message} (${POSTGRES_URL})`);
  } finally {
    await pool.end();
  }
  return { rows, notes };
}
