import assert from "node:assert/strict";
import { test } from "node:test";
import { InMemoryStore } from "@langchain/langgraph";
import { ExpiringStore } from "../../src/store/expiring-store.js";

// Store items' time to live in memory (langgraph.json's `store.ttl`, the Agent Protocol's
// `ttl`), on a clock the test turns: an item goes when its minutes are up, a read starts them
// again unless told not to, and nothing past its time is returned or kept.

function clocked(ttl: { defaultTtl?: number; refreshOnRead?: boolean } = {}) {
  const clock = { ms: 1_000_000, now: () => clock.ms };
  const inner = new InMemoryStore();
  return { store: new ExpiringStore(inner, ttl, clock), inner, clock, minutes: (count: number) => (clock.ms += count * 60_000) };
}

const put = (namespace: string[], key: string, value: Record<string, unknown> | null, ttl?: number | null) => ({
  namespace,
  key,
  value,
  ...(ttl === undefined ? {} : { options: { ttl } }),
});

test("an item's own ttl: there until its minutes are up, then gone from gets, searches and the store under it", async () => {
  const { store, inner, minutes } = clocked();
  await store.batch([put(["notes"], "short", { text: "a" }, 2), put(["notes"], "kept", { text: "b" })]);
  minutes(1.9);
  assert.deepEqual((await store.get(["notes"], "short"))?.value, { text: "a" });
  // The read above started its two minutes again (refresh on read is LangGraph's default).
  minutes(1.9);
  assert.notEqual(await store.get(["notes"], "short"), null);
  minutes(2.1);
  assert.deepEqual(
    (await store.search(["notes"])).map((item) => item.key),
    ["kept"],
  );
  assert.equal(await inner.get(["notes"], "short"), null, "deleted, not only hidden");
  assert.equal(store.timed, 0);
});

test("the default ttl, an item's null ttl (none), and refreshOnRead: false", async () => {
  const { store, minutes } = clocked({ defaultTtl: 5, refreshOnRead: false });
  await store.batch([put(["a"], "default", { n: 1 }), put(["a"], "forever", { n: 2 }, null)]);
  minutes(4);
  assert.notEqual(await store.get(["a"], "default"), null);
  minutes(1.5);
  // Read at minute 4, yet gone at 5.5: reads leave the time as it is.
  assert.equal(await store.get(["a"], "default"), null);
  minutes(1_000);
  assert.notEqual(await store.get(["a"], "forever"), null);
});

test("a read told not to refresh leaves the time; a put again starts it over; a delete forgets it", async () => {
  const { store, minutes } = clocked();
  await store.batch([put(["a"], "k", { n: 1 }, 3)]);
  minutes(2);
  await store.batch([{ namespace: ["a"], key: "k", refreshTtl: false }]);
  minutes(1.5);
  assert.equal(await store.get(["a"], "k"), null);
  await store.batch([put(["a"], "k", { n: 2 }, 3)]);
  minutes(2.5);
  await store.batch([put(["a"], "k", { n: 3 }, 3)]);
  minutes(2.5);
  assert.deepEqual((await store.get(["a"], "k"))?.value, { n: 3 });
  await store.delete(["a"], "k");
  assert.equal(store.timed, 0);
});
