// Lease acquire + release for the Redis and Postgres coordinators, against the bare round
// trips they are built on (Redis PING; Postgres SELECT 1 on a pooled connection), one at a
// time, in alternating rounds. Needs the services of the test suite (TEST_REDIS_URL,
// TEST_POSTGRES_URL). Run with `npm run bench:leases`.

import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { createPostgresPool } from "../src/coordination/postgres-pool.js";
import { PostgresRunCoordinator } from "../src/coordination/postgres-run-coordinator.js";
import { RedisRunCoordinator } from "../src/coordination/redis-run-coordinator.js";
import type { RunCoordinator } from "../src/coordination/run-coordinator.js";

const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const perRound = Number(process.env.BENCH_CALLS ?? 500);

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Microseconds per call, one call at a time. */
async function perCall(call: () => Promise<void>): Promise<number> {
  for (let index = 0; index < 50; index += 1) await call();
  const started = performance.now();
  for (let index = 0; index < perRound; index += 1) await call();
  return ((performance.now() - started) / perRound) * 1000;
}

const leaseCycle = (coordinator: RunCoordinator) => async () => {
  const lease = await coordinator.tryAcquire(`bench:${randomUUID()}`);
  if (lease === null) throw new Error("a fresh key was busy");
  await lease.release();
};

const redis = new Redis(REDIS_URL);
const redisCoordinator = new RedisRunCoordinator({ url: REDIS_URL, keyPrefix: `chat-serve-bench:${randomUUID()}:` });
const pool = createPostgresPool({ url: POSTGRES_URL, max: 4, timeoutMs: 2_000 });
const postgresCoordinator = new PostgresRunCoordinator({ pool, maxConcurrentLeases: 2 });

const cases = [
  { name: "Redis", bare: async () => void (await redis.ping()), lease: leaseCycle(redisCoordinator), floor: "PING" },
  { name: "Postgres", bare: async () => void (await pool.query("SELECT 1")), lease: leaseCycle(postgresCoordinator), floor: "SELECT 1" },
];
const rows = [];
for (const { name, bare, lease, floor } of cases) {
  const bareTimes: number[] = [];
  const leaseTimes: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    if (round % 2 === 0) {
      bareTimes.push(await perCall(bare));
      leaseTimes.push(await perCall(lease));
    } else {
      leaseTimes.push(await perCall(lease));
      bareTimes.push(await perCall(bare));
    }
  }
  rows.push({
    coordinator: name,
    "bare round trip": floor,
    "bare µs": Math.round(median(bareTimes)),
    "acquire + release µs": Math.round(median(leaseTimes)),
    "vs bare": (median(leaseTimes) / median(bareTimes)).toFixed(2),
  });
}
console.log(`lease bench: ${rounds} rounds of ${perRound} calls each side, one at a time, node ${process.version}`);
console.table(rows);
redis.disconnect();
await redisCoordinator.close();
await pool.end();
