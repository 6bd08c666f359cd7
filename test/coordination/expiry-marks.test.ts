import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import pg from "pg";
import { MemoryPendingRunIndex, type PendingRunIndex } from "../../src/coordination/pending-run-index.js";
import { PostgresPendingRunIndex } from "../../src/coordination/postgres-pending-run-index.js";
import { dropSchema, POSTGRES_URL, requirePostgres, uniqueSchema } from "../helpers/services.js";

// An expired run's mark is what tells a client that comes back late "this run expired" rather
// than "no pending interrupts". Both indexes keep it until the cutoff the sweeper gives them, and
// forget the oldest past their bound.

const postgresStatus = await requirePostgres();
const closers: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

async function postgresIndex(): Promise<PendingRunIndex> {
  const schema = uniqueSchema();
  const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 2 });
  await pool.query(`CREATE SCHEMA "${schema}"`);
  const index = new PostgresPendingRunIndex(pool, schema);
  await (index as PostgresPendingRunIndex).setup();
  closers.push(
    () => pool.end(),
    () => dropSchema(schema),
  );
  return index;
}

const kinds: [string, () => Promise<PendingRunIndex>, { skip: string | false }][] = [
  ["memory", async () => new MemoryPendingRunIndex(), { skip: false }],
  ["postgres", postgresIndex, postgresStatus],
];

for (const [kind, make, status] of kinds) {
  describe(`expiry marks (${kind})`, { skip: status.skip }, () => {
    test("a mark outlives any cutoff before it was made, and goes with the first cutoff after it", async () => {
      const index = await make();
      await index.record({ key: "k1", model: "m", runId: "5b7f3c0e-8d2a-4f41-9c55-0a1e2b3c4d5e", scope: "default" });
      await index.markExpired("k1");
      const expiredAt = (await index.get("k1"))?.expiredAt;
      assert.ok(expiredAt instanceof Date);
      // The sweeper's cutoff is now minus the store's retention: an hour back keeps it.
      await index.forgetExpiredBefore(new Date(expiredAt.getTime() - 3_600_000));
      assert.ok((await index.get("k1"))?.expiredAt, "still marked expired");
      await index.forgetExpiredBefore(new Date(expiredAt.getTime() + 1_000));
      assert.equal(await index.get("k1"), undefined);
    });
  });
}

test("the memory index keeps at most its bound of marks, forgetting the oldest", async () => {
  let clock = 0;
  const index = new MemoryPendingRunIndex(() => new Date(1_000_000 + clock), { maxExpired: 2 });
  for (const key of ["a", "b", "c"]) {
    clock += 1_000;
    await index.record({ key, model: "m", runId: key, scope: "default" });
    await index.markExpired(key);
  }
  await index.forgetExpiredBefore(new Date(0));
  assert.equal(await index.get("a"), undefined, "the oldest mark is forgotten");
  assert.ok((await index.get("b"))?.expiredAt);
  assert.ok((await index.get("c"))?.expiredAt);
});
