import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { graph as echo } from "../../demo/graphs/echo.js";
import { MemoryAgentRecords } from "../../src/store/agent-records.js";
import { eventually } from "../helpers/eventually.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// The in-memory caps are shared by a process's tenants, and once evicted the least recently
// used entry overall: tenant B's 10,050 empty threads took tenant A's threads and checkpoints,
// and B touching 1,000 thread ids dropped A's protocol v2 replay. Now the tenant holding the
// most gives up its own oldest.

const KEYS = { a: "tenant-a-key-0123456789", b: "tenant-b-key-0123456789" } as const;

let server: TestServer;
before(async () => {
  server = await startTestServer(
    { echo: { graph: echo, description: "Echo", streamableNodeNames: ["respond"] } },
    { langgraph: true, auth: { keys: Object.entries(KEYS).map(([tenant, key]) => ({ key, tenant })) } },
  );
});
after(() => server.close());

const command = (tenant: keyof typeof KEYS, threadId: string, body: unknown) =>
  fetch(`${server.origin}/threads/${threadId}/commands`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": KEYS[tenant] },
    body: JSON.stringify(body),
  }).then(async (response) => ({ status: response.status, body: (await response.json()) as Record<string, any> }));

const thread = (scope: string, id: string, status: "idle" | "busy" = "idle") => ({
  thread_id: id,
  scope,
  status,
  metadata: {},
  created_at: "2026-01-01T00:00:00.000Z",
  updated_at: "2026-01-01T00:00:00.000Z",
  values: null,
  interrupts: {},
  config: {},
});

describe("tenants and the in-memory caps", () => {
  test("threads: past the cap, the tenant holding the most loses its own least recently updated", async () => {
    const records = new MemoryAgentRecords({ maxThreads: 20 });
    const evicted: string[] = [];
    records.onEvict = (record) => evicted.push(`${record.scope}/${record.thread_id}`);
    for (let n = 0; n < 5; n += 1) await records.putThread(thread("a", `a-${n}`) as never);
    await records.putThread(thread("b", "b-busy", "busy") as never);
    for (let n = 0; n < 60; n += 1) await records.putThread(thread("b", `b-${n}`) as never);
    assert.equal((await records.listThreads("a")).length, 5, "tenant a keeps every thread");
    const kept = (await records.listThreads("b")).map((record) => record.thread_id);
    assert.equal(kept.length, 15);
    assert.ok(kept.includes("b-busy"), "a busy thread is never evicted");
    assert.ok(kept.includes("b-59") && !kept.includes("b-0"), "b's oldest went first");
    assert.equal(evicted.length, 46);
    assert.ok(evicted.every((id) => id.startsWith("b/")));
    // As a grows, b gives up its threads until the two hold even shares; then each loses its own.
    for (let n = 5; n < 12; n += 1) await records.putThread(thread("a", `a-${n}`) as never);
    assert.equal((await records.listThreads("a")).length, 10);
    assert.equal((await records.listThreads("b")).length, 10);
    assert.deepEqual(evicted.slice(-2), ["a/a-0", "a/a-1"]);
  });

  test("protocol v2: another tenant touching 1,000 thread ids leaves a tenant's replay whole", async () => {
    const threadId = randomUUID();
    const started = await command("a", threadId, {
      id: 1,
      method: "run.start",
      params: { assistant_id: "echo", input: { messages: [{ role: "user", content: "hello" }] } },
    });
    assert.equal(started.body.type, "success", JSON.stringify(started.body));
    let applied = 0;
    await eventually(async () => {
      const state = await command("a", threadId, { id: 2, method: "state.get", params: {} });
      applied = state.body.meta?.applied_through_seq ?? 0;
      assert.ok(JSON.stringify(state.body).includes("hello"), JSON.stringify(state.body));
    }, 10_000);
    assert.ok(applied > 0, "the run logged events");
    for (let start = 0; start < 1_000; start += 50) {
      await Promise.all(Array.from({ length: 50 }, () => command("b", randomUUID(), { id: 1, method: "state.get", params: {} })));
    }
    const after = await command("a", threadId, { id: 3, method: "state.get", params: {} });
    assert.equal(after.body.meta?.applied_through_seq, applied, "a's thread log is still there");
  });
});
