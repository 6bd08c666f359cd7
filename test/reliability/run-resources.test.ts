import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import { test } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { MemorySaver } from "@langchain/langgraph";
import { ChatServe } from "../../src/app/chat-serve.js";
import { InMemoryRunCoordinator } from "../../src/coordination/in-memory-run-coordinator.js";
import type { RunCoordinator, RunLease } from "../../src/coordination/run-coordinator.js";
import { GraphRegistry } from "../../src/registry/graph-registry.js";
import { anySignal } from "../../src/util/any-signal.js";
import { counterGraph } from "../fixtures/interrupt-graphs.js";

/** The conversation that answers a batch of calls with "yes". */
function answers(calls: { id: string }[]) {
  return [
    { role: "user", content: "go" },
    { role: "assistant", content: null, tool_calls: calls },
    ...calls.map((call) => ({ role: "tool", tool_call_id: call.id, content: "yes" })),
  ];
}

/** The memory coordinator, keeping every lease it handed out so the test can inspect them. */
class RecordingCoordinator implements RunCoordinator {
  readonly inner = new InMemoryRunCoordinator();
  readonly leases: RunLease[] = [];
  async tryAcquire(key: string): Promise<RunLease | null> {
    const lease = await this.inner.tryAcquire(key);
    if (lease !== null) this.leases.push(lease);
    return lease;
  }
}

test("interrupt runs leave nothing listening on their leases, and no lease held", async () => {
  const coordinator = new RecordingCoordinator();
  const registry = new GraphRegistry(
    { counter: { graph: counterGraph({ before: 0, after: 0 }), description: "x", features: ["INTERRUPTS"] } },
    { runCoordinator: coordinator, checkpointer: new MemorySaver() },
  );
  const app = await new ChatServe({ graphs: registry }).bind();
  try {
    for (let round = 0; round < 20; round += 1) {
      const paused = await app.inject({
        method: "POST",
        url: "/v1/chat/completions",
        payload: { model: "counter", stream: round % 2 === 0, messages: [{ role: "user", content: "go" }] },
      });
      assert.equal(paused.statusCode, 200);
      const calls = round % 2 === 0 ? undefined : paused.json().choices[0].message.tool_calls;
      if (calls === undefined) continue;
      const done = await app.inject({
        method: "POST",
        url: "/v1/chat/completions",
        payload: { model: "counter", messages: answers(calls) },
      });
      assert.equal(done.statusCode, 200);
    }
    assert.ok(coordinator.leases.length >= 30);
    for (const lease of coordinator.leases)
      assert.equal(getEventListeners(lease.signal, "abort").length, 0, "a run left a listener on its lease");
    assert.equal(coordinator.inner.size, 0, "no lease left held");
  } finally {
    await app.close();
  }
});

test("anySignal follows the first signal to abort and removes its listeners when disposed", () => {
  const first = new AbortController();
  const second = new AbortController();
  const combined = anySignal([first.signal, second.signal]);
  assert.equal(getEventListeners(first.signal, "abort").length, 1);
  second.abort(new Error("second"));
  assert.equal(combined.signal.aborted, true);
  assert.equal((combined.signal.reason as Error).message, "second");
  assert.equal(getEventListeners(first.signal, "abort").length, 0, "aborting removes the other listeners too");

  const third = new AbortController();
  const disposed = anySignal([third.signal]);
  disposed.dispose();
  assert.equal(getEventListeners(third.signal, "abort").length, 0);
  third.abort();
  assert.equal(disposed.signal.aborted, false);

  const already = AbortSignal.abort(new Error("before"));
  assert.equal(anySignal([already]).signal.aborted, true);
});

test("interrupt round trips keep the heap flat", async () => {
  setFlagsFromString("--expose-gc");
  const collect = runInNewContext("gc") as () => void;
  const heapAfterGc = () => {
    collect();
    collect();
    return process.memoryUsage().heapUsed;
  };
  const registry = new GraphRegistry(
    { counter: { graph: counterGraph({ before: 0, after: 0 }), description: "x", features: ["INTERRUPTS"] } },
    { runCoordinator: new InMemoryRunCoordinator(), checkpointer: new MemorySaver() },
  );
  const app = await new ChatServe({ graphs: registry }).bind();
  const roundTrip = async () => {
    const paused = await app.inject({
      method: "POST",
      url: "/v1/chat/completions",
      payload: { model: "counter", messages: [{ role: "user", content: "go" }] },
    });
    const calls = paused.json().choices[0].message.tool_calls;
    await app.inject({
      method: "POST",
      url: "/v1/chat/completions",
      payload: { model: "counter", messages: answers(calls) },
    });
  };
  try {
    for (let round = 0; round < 300; round += 1) await roundTrip();
    // Two windows: a leak grows the heap in both, while the collector's own timing moves one
    // window by a megabyte now and then (seen under a loaded machine).
    const growth: number[] = [];
    for (let window = 0; window < 2; window += 1) {
      const before = heapAfterGc();
      for (let round = 0; round < 600; round += 1) await roundTrip();
      growth.push(heapAfterGc() - before);
    }
    // A leak of a few kilobytes per run (as AbortSignal.any has on Node 20) would be megabytes in each.
    const least = Math.min(...growth);
    assert.ok(
      least < 1_400_000,
      `the heap grew by ${growth.map((bytes) => (bytes / 1e6).toFixed(2)).join(" and ")} MB over two windows of 600 round trips`,
    );
  } finally {
    await app.close();
  }
});
