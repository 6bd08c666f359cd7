import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import pg from "pg";
import { InMemoryRunCoordinator } from "../../src/coordination/in-memory-run-coordinator.js";
import { advisoryLockId, PostgresRunCoordinator } from "../../src/coordination/postgres-run-coordinator.js";
import { RedisRunCoordinator } from "../../src/coordination/redis-run-coordinator.js";
import type { RunCoordinator } from "../../src/coordination/run-coordinator.js";
import { BackendUnavailableError } from "../../src/errors/catalogue.js";
import { eventually } from "../helpers/eventually.js";
import { POSTGRES_URL, REDIS_URL, requirePostgres, requireRedis, uniquePrefix } from "../helpers/services.js";

const redisStatus = await requireRedis();
const postgresStatus = await requirePostgres();
const closers: (() => unknown)[] = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

const newKey = () => randomBytes(32).toString("hex");

function redisCoordinator(options: { leaseTtlMs?: number; keyPrefix?: string } = {}) {
  const coordinator = new RedisRunCoordinator({
    url: REDIS_URL,
    keyPrefix: options.keyPrefix ?? uniquePrefix(),
    leaseTtlMs: options.leaseTtlMs,
  });
  closers.push(() => coordinator.close());
  return coordinator;
}

function postgresPool(max = 4) {
  const pool = new pg.Pool({ connectionString: POSTGRES_URL, max });
  pool.on("error", () => {});
  closers.push(() => pool.end());
  return pool;
}

const implementations: { name: string; skip: string | false; make: () => RunCoordinator }[] = [
  { name: "memory", skip: false, make: () => new InMemoryRunCoordinator() },
  { name: "redis", skip: redisStatus.skip, make: () => redisCoordinator() },
  { name: "postgres", skip: postgresStatus.skip, make: () => new PostgresRunCoordinator({ pool: postgresPool() }) },
];

for (const { name, skip, make } of implementations) {
  describe(`${name} coordinator contract`, { skip }, () => {
    test("single flight: a held key cannot be leased again; other keys can", async () => {
      const coordinator = make();
      const key = newKey();
      const lease = await coordinator.tryAcquire(key);
      assert.ok(lease);
      assert.equal(await coordinator.tryAcquire(key), null);
      const other = await coordinator.tryAcquire(newKey());
      assert.ok(other);
      await other.release();
      await lease.release();
    });

    test("any key, not only a checkpoint key: the pending-run sweep's own lease is single-flight too", async () => {
      // Two holders, as two processes would be (one coordinator for the memory one).
      const keyPrefix = uniquePrefix();
      const pair = (): RunCoordinator[] => {
        if (name === "redis") return [redisCoordinator({ keyPrefix }), redisCoordinator({ keyPrefix })];
        if (name === "memory") {
          const one = make();
          return [one, one];
        }
        return [make(), make()];
      };
      const [first, second] = pair() as [RunCoordinator, RunCoordinator];
      const key = `chat-serve:pending-run-sweep:${newKey().slice(0, 8)}`;
      const lease = await first.tryAcquire(key);
      assert.ok(lease);
      assert.equal(await second.tryAcquire(key), null);
      await lease.release();
      const again = await second.tryAcquire(key);
      assert.ok(again);
      await again.release();
    });

    test("try-lock: a refusal comes at once, it never waits for the holder", async () => {
      const coordinator = make();
      const key = newKey();
      const lease = await coordinator.tryAcquire(key);
      const started = performance.now();
      assert.equal(await coordinator.tryAcquire(key), null);
      assert.ok(performance.now() - started < 1_000);
      await lease!.release();
    });

    test("release happens exactly once: a second release never frees the next holder's lease", async () => {
      const coordinator = make();
      const key = newKey();
      const first = await coordinator.tryAcquire(key);
      await first!.release();
      const second = await coordinator.tryAcquire(key);
      assert.ok(second, "released keys can be leased again");
      await first!.release();
      assert.equal(await coordinator.tryAcquire(key), null, "the stale release did not free the second lease");
      await second.release();
    });

    test("released after an error and after an abort", async () => {
      const coordinator = make();
      const key = newKey();
      await assert.rejects(async () => {
        const lease = await coordinator.tryAcquire(key);
        try {
          throw new Error("the run failed");
        } finally {
          await lease!.release();
        }
      }, /the run failed/);
      const controller = new AbortController();
      const lease = await coordinator.tryAcquire(key);
      assert.ok(lease, "free again after the error");
      controller.signal.addEventListener("abort", () => void lease.release());
      controller.abort();
      await lease.release();
      const again = await coordinator.tryAcquire(key);
      assert.ok(again, "free again after the abort");
      await again.release();
    });

    test("the readiness check passes while the backend is up", async () => {
      await make().check?.();
    });
  });
}

describe("redis coordinator specifics", { skip: redisStatus.skip }, () => {
  test("a crashed holder's key frees itself after the TTL", async () => {
    const keyPrefix = uniquePrefix();
    const holder = new RedisRunCoordinator({ url: REDIS_URL, keyPrefix, leaseTtlMs: 1_000 });
    const key = newKey();
    assert.ok(await holder.tryAcquire(key));
    await holder.close(); // the holder is gone: no renewals, no release
    const other = redisCoordinator({ keyPrefix, leaseTtlMs: 1_000 });
    assert.equal(await other.tryAcquire(key), null);
    await sleep(1_300);
    const lease = await other.tryAcquire(key);
    assert.ok(lease, "free after the TTL");
    await lease.release();
  });

  test("a lease that is renewed outlives its TTL; one that is taken away aborts its run", async () => {
    const keyPrefix = uniquePrefix();
    const coordinator = redisCoordinator({ keyPrefix, leaseTtlMs: 1_000 });
    const key = newKey();
    const lease = await coordinator.tryAcquire(key);
    await sleep(1_500);
    assert.equal(await coordinator.tryAcquire(key), null, "still held thanks to renewal");
    assert.equal(lease!.signal.aborted, false);
    const redis = new Redis(REDIS_URL);
    closers.push(() => redis.disconnect());
    await redis.set(`${keyPrefix}${key}`, "someone else");
    await eventually(async () => assert.equal(lease!.signal.aborted, true, "the run is told its lease is lost"), 5_000, 25);
    await lease!.release();
    assert.equal(await redis.get(`${keyPrefix}${key}`), "someone else", "releasing a lost lease leaves the new holder alone");
  });
});

describe("postgres coordinator specifics", { skip: postgresStatus.skip }, () => {
  test("maxConcurrentLeases must be below the pool maximum, one coordinator per pool", () => {
    assert.throws(() => new PostgresRunCoordinator({ pool: postgresPool(3), maxConcurrentLeases: 3 }), /below the pool maximum \(3\)/);
    const pool = postgresPool(3);
    new PostgresRunCoordinator({ pool });
    assert.throws(() => new PostgresRunCoordinator({ pool }), /one coordinator per pool/);
  });

  test("past maxConcurrentLeases a lease is refused at once with a 503, not queued", async () => {
    const coordinator = new PostgresRunCoordinator({ pool: postgresPool(3), maxConcurrentLeases: 2 });
    const leases = [await coordinator.tryAcquire(newKey()), await coordinator.tryAcquire(newKey())];
    await assert.rejects(coordinator.tryAcquire(newKey()), BackendUnavailableError);
    await Promise.all(leases.map((lease) => lease!.release()));
    const lease = await coordinator.tryAcquire(newKey());
    assert.ok(lease);
    await lease.release();
    assert.equal(coordinator.activeLeases, 0);
  });

  test("a lease connection that dies frees the lock and aborts the run", async () => {
    const coordinator = new PostgresRunCoordinator({ pool: postgresPool(4) });
    const key = newKey();
    const lease = await coordinator.tryAcquire(key);
    // Released however the test ends: a pool never finishes closing while a lease is out.
    closers.push(() => lease?.release());
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    closers.push(() => admin.end());
    const { rows } = await admin.query<{ pid: number }>(
      "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND ((classid::bigint << 32) | objid::bigint) = $1::bigint",
      [advisoryLockId(key)],
    );
    assert.equal(rows.length, 1, "the lock is held in the database");
    await admin.query("SELECT pg_terminate_backend($1)", [rows[0]!.pid]);
    await eventually(async () => assert.equal(lease!.signal.aborted, true), 5_000, 25);
    const other = new PostgresRunCoordinator({ pool: postgresPool(4) });
    const next = await other.tryAcquire(key);
    assert.ok(next, "the dead connection's lock is gone");
    await next.release();
  });
});
