import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { v7 as uuid7 } from "@langchain/core/utils/uuid";
import pg from "pg";
import { InMemoryRunCoordinator } from "../../src/coordination/in-memory-run-coordinator.js";
import { sweepExpiredThreads } from "../../src/runs/agent/thread-sweeper.js";
import { type AgentRecords, type AgentThreadRecord, MemoryAgentRecords } from "../../src/store/agent-records.js";
import { PostgresConversationStore } from "../../src/store/postgres-conversation-store.js";
import { dropSchema, POSTGRES_URL, requirePostgres, uniqueSchema } from "../helpers/services.js";

// `checkpointer.ttl`: the threads idle past their time to live (their own `ttl`, else the
// deployment's default) are swept, oldest first, busy ones left for the next sweep, one
// sweep at a time; in memory and on Postgres alike.

const postgres = await requirePostgres();
const schemas: string[] = [];
const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 2 });
after(async () => {
  await pool.end();
  for (const schema of schemas) await dropSchema(schema);
});

const MINUTE = 60_000;
const now = new Date("2026-11-29T12:00:00.000Z");
const ago = (minutes: number) => new Date(now.getTime() - minutes * MINUTE).toISOString();

function thread(scope: string, idleMinutes: number, fields: Partial<AgentThreadRecord> = {}): AgentThreadRecord {
  return {
    thread_id: uuid7(),
    scope,
    created_at: ago(idleMinutes + 5),
    updated_at: ago(idleMinutes),
    state_updated_at: ago(idleMinutes),
    metadata: {},
    status: "idle",
    ...fields,
  };
}

for (const [name, make, skip] of [
  ["in memory", async () => new MemoryAgentRecords(), false],
  [
    "on Postgres",
    async () => {
      // A schema of each test's own: what one test leaves expired is not another's to sweep.
      const schema = uniqueSchema();
      schemas.push(schema);
      const store = new PostgresConversationStore(pool, schema);
      await store.setup();
      return store.agentRecords;
    },
    postgres.skip,
  ],
] as const) {
  describe(`threads past their time to live, ${name}`, { skip }, () => {
    test("their own ttl, else the default; oldest first; none without either", async () => {
      const records: AgentRecords = await make();
      const stale = thread("a", 90);
      const staler = thread("b", 120);
      const fresh = thread("a", 10);
      const ownShort = thread("a", 3, { ttl_minutes: 2 });
      const ownLong = thread("b", 100, { ttl_minutes: 600 });
      for (const record of [stale, staler, fresh, ownShort, ownLong]) await records.putThread(record);
      const ids = (list: AgentThreadRecord[]) => list.map((record) => record.thread_id);
      assert.deepEqual(ids(await records.expiredThreads(now, 60, 10)), [staler.thread_id, stale.thread_id, ownShort.thread_id]);
      assert.deepEqual(ids(await records.expiredThreads(now, undefined, 10)), [ownShort.thread_id], "no default: only a thread's own");
      assert.deepEqual(ids(await records.expiredThreads(now, 60, 1)), [staler.thread_id], "at most the limit");
    });

    test("a sweep deletes them, leaves a busy one, and runs once at a time", async () => {
      const records: AgentRecords = await make();
      const idle = thread("s", 30, { ttl_minutes: 1 });
      const busy = thread("s", 30, { ttl_minutes: 1, status: "busy" });
      await records.putThread(idle);
      await records.putThread(busy);
      const coordinator = new InMemoryRunCoordinator();
      const deleted: string[] = [];
      const options = {
        records,
        coordinator,
        ttl: { sweepIntervalMs: MINUTE },
        backendTimeoutMs: 2_000,
        now,
        deleteThread: async (scope: string, threadId: string) => {
          deleted.push(threadId);
          await records.deleteThread(scope, threadId);
        },
        keepLatest: async () => assert.fail("no thread here keeps its latest checkpoint"),
        warn: () => {},
      };
      // Another process is sweeping: this one skips the round.
      const held = await coordinator.tryAcquire("agent-thread-ttl-sweep");
      assert.equal(await sweepExpiredThreads(options), 0);
      await held?.release();
      assert.equal(await sweepExpiredThreads(options), 1);
      assert.deepEqual(deleted, [idle.thread_id]);
      assert.equal(await records.getThread("s", idle.thread_id), undefined);
      assert.ok(await records.getThread("s", busy.thread_id), "a busy thread waits for the next sweep");
      assert.equal(await sweepExpiredThreads(options), 0, "nothing is swept twice");
    });

    test("keep_latest: the thread's own strategy, else the deployment's; a kept thread waits until it changes", async () => {
      const records: AgentRecords = await make();
      const ownKeep = thread("k", 30, { ttl_minutes: 1, ttl_strategy: "keep_latest" });
      const ownDelete = thread("k", 30, { ttl_minutes: 1, ttl_strategy: "delete" });
      const byDefault = thread("k", 90);
      for (const record of [ownKeep, ownDelete, byDefault]) await records.putThread(record);
      const deleted: string[] = [];
      const kept: string[] = [];
      const options = {
        records,
        coordinator: new InMemoryRunCoordinator(),
        ttl: { strategy: "keep_latest" as const, defaultMinutes: 60, sweepIntervalMs: MINUTE },
        backendTimeoutMs: 2_000,
        now,
        deleteThread: async (scope: string, threadId: string) => {
          deleted.push(threadId);
          await records.deleteThread(scope, threadId);
        },
        keepLatest: async (scope: string, threadId: string) => {
          kept.push(threadId);
          const record = (await records.getThread(scope, threadId))!;
          await records.putThread({ ...record, pruned_at: record.updated_at });
          return true;
        },
        warn: () => {},
      };
      assert.equal(await sweepExpiredThreads(options), 3);
      assert.deepEqual(deleted, [ownDelete.thread_id]);
      assert.deepEqual(kept.sort(), [ownKeep.thread_id, byDefault.thread_id].sort());
      assert.equal(await sweepExpiredThreads(options), 0, "a kept thread is not swept again");
      // Once it changes (a run, an update), its time starts again and it is swept again after.
      await records.putThread({ ...(await records.getThread("k", ownKeep.thread_id))!, updated_at: ago(20) });
      assert.equal(await sweepExpiredThreads(options), 1);
      assert.deepEqual(kept.at(-1), ownKeep.thread_id);
    });
  });
}
