import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import { graph as echo } from "../../demo/graphs/echo.js";
import { graph as memory } from "../../demo/graphs/memory.js";
import { eventually } from "../helpers/eventually.js";
import { startTestServer, type TestServer, TWO_TENANTS } from "../helpers/server.js";

// Threads, their state and the store, through the SDK's `Client`; what a client gets wrong,
// in the protocol's own shape; and tenants kept apart.

const user = (content: string) => ({ messages: [{ role: "user", content }] });
const lastText = (values: unknown) => (values as { messages: { content: string }[] }).messages.at(-1)?.content;

let server: TestServer;
let client: Client;

before(async () => {
  server = await startTestServer(
    {
      echo: { graph: echo, description: "Echo", streamableNodeNames: ["respond"] },
      memory: { graph: memory, description: "Remembers", threads: true },
    },
    {
      langgraph: true,
      auth: TWO_TENANTS.auth,
    },
  );
  client = new Client({ apiUrl: server.origin, apiKey: "tenant-a-key-0123456789" });
});
after(() => server.close());

/** A raw request with tenant a's key. */
function send(method: string, path: string, body?: unknown, key = "tenant-a-key-0123456789") {
  return fetch(`${server.origin}${path}`, {
    method,
    headers: { "x-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
}

describe("threads", () => {
  test("create with an id, metadata and if_exists; get, patch, search, count, copy, delete", async () => {
    const id = "0193a5b2-0000-7000-8000-000000000001";
    const created = await client.threads.create({ threadId: id, metadata: { project: "x", owner: "ann" } });
    assert.equal(created.thread_id, id);
    assert.equal(created.status, "idle");
    assert.deepEqual(created.metadata, { project: "x", owner: "ann" });
    assert.equal((await send("POST", "/threads", { thread_id: id })).status, 409);
    assert.equal((await client.threads.create({ threadId: id, ifExists: "do_nothing" })).thread_id, id);
    await client.runs.wait(id, "memory", { input: user("first words") });
    const patched = await client.threads.update(id, { metadata: { owner: "bob" } });
    // A run merged its graph and assistant into the thread's metadata, as LangGraph's server does.
    const { assistant_id: assistantId, ...rest } = patched.metadata as Record<string, unknown>;
    assert.deepEqual(rest, { project: "x", owner: "bob", graph_id: "memory" });
    assert.match(String(assistantId), /^[0-9a-f-]{36}$/u);
    const other = await client.threads.create({ metadata: { project: "y" } });
    const found = await client.threads.search({ metadata: { project: "x" } });
    assert.deepEqual(
      found.map((thread) => thread.thread_id),
      [id],
    );
    assert.equal(lastText(found[0]?.values), 'You said "first words". This is the start of our conversation.');
    assert.equal(await client.threads.count({ metadata: { project: "y" } }), 1);
    const page = await client.threads.search({ limit: 1, sortBy: "created_at", sortOrder: "asc" });
    assert.deepEqual(
      page.map((thread) => thread.thread_id),
      [id],
    );
    assert.deepEqual(
      (await client.threads.search({ values: { messages: [] } })).map((thread) => thread.thread_id),
      [],
    );
    const copy = await client.threads.copy(id);
    assert.notEqual(copy.thread_id, id);
    const copied = await client.runs.wait(copy.thread_id, "memory", { input: user("on the copy") });
    assert.match(String(lastText(copied)), /Before that you said: "first words"/u, "the copy has the whole history");
    // GET, PATCH and DELETE are one route: HEAD answers as GET does, without a body; POST is 405.
    const head = await send("HEAD", `/threads/${id}`);
    assert.equal(head.status, 200);
    assert.equal(await head.text(), "");
    assert.equal(Number(head.headers.get("content-length")), (await (await send("GET", `/threads/${id}`)).arrayBuffer()).byteLength);
    const wrong = await send("POST", `/threads/${id}`, {});
    assert.equal(wrong.status, 405);
    assert.equal(wrong.headers.get("allow"), "GET, PATCH, DELETE, HEAD");
    await client.threads.delete(other.thread_id);
    assert.equal((await send("GET", `/threads/${other.thread_id}`)).status, 404);
  });

  test("state: read, written as a node, read at a checkpoint; history newest first", async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "memory", { input: user("hello") });
    const before = await client.threads.getState(thread.thread_id);
    assert.deepEqual(before.next, []);
    // The SDK types the answer as a config; the server (as LangGraph's) answers `{ checkpoint }`.
    const written = (await client.threads.updateState(thread.thread_id, {
      values: { messages: [{ role: "user", content: "added by hand" }] },
      asNode: "respond",
    })) as unknown as { checkpoint: { checkpoint_id: string } };
    assert.ok(written.checkpoint.checkpoint_id);
    const after = await client.threads.getState(thread.thread_id);
    assert.equal(lastText(after.values), "added by hand");
    const old = await client.threads.getState(thread.thread_id, before.checkpoint.checkpoint_id!);
    assert.equal((old.values as { messages: unknown[] }).messages.length, 2);
    const history = await client.threads.getHistory(thread.thread_id, { limit: 2 });
    assert.equal(history.length, 2);
    assert.equal(history[0]?.checkpoint.checkpoint_id, written.checkpoint.checkpoint_id);
    const missing = await send("GET", `/threads/${thread.thread_id}/state/1ef00000-0000-6000-8000-000000000000`);
    assert.equal(missing.status, 404);
    // A run from another thread's checkpoint: refused, naming the field, never run from an empty state.
    const other = await client.threads.create();
    const elsewhere = await send("POST", `/threads/${other.thread_id}/runs/wait`, {
      assistant_id: "memory",
      input: user("from where?"),
      checkpoint_id: written.checkpoint.checkpoint_id,
    });
    assert.equal(elsewhere.status, 422);
    assert.match(((await elsewhere.json()) as { detail: string }).detail, /^checkpoint_id: thread .* has no checkpoint /u);
  });

  test("prune: keep_latest leaves one checkpoint and the state; delete takes the thread; others' and unknown ids are not counted", async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "memory", { input: user("one") });
    await client.runs.wait(thread.thread_id, "memory", { input: user("two") });
    const before = await client.threads.getState(thread.thread_id);
    assert.ok((await client.threads.getHistory(thread.thread_id)).length > 2);
    assert.deepEqual(await client.threads.prune([thread.thread_id], { strategy: "keep_latest" }), { pruned_count: 1 });
    assert.equal((await client.threads.getHistory(thread.thread_id)).length, 1);
    assert.deepEqual((await client.threads.getState(thread.thread_id)).values, before.values);
    // The thread runs on from the checkpoint left.
    await client.runs.wait(thread.thread_id, "memory", { input: user("three") });
    assert.equal((await client.threads.getHistory(thread.thread_id)).length > 1, true);

    const othersThread = await new Client({ apiUrl: server.origin, apiKey: "tenant-b-key-0123456789" }).threads.create();
    const unknown = "1ef00000-0000-6000-8000-000000000000";
    assert.deepEqual(await client.threads.prune([thread.thread_id, othersThread.thread_id, unknown]), { pruned_count: 1 });
    assert.equal((await send("GET", `/threads/${thread.thread_id}`)).status, 404);
    assert.equal((await send("GET", `/threads/${othersThread.thread_id}`, undefined, "tenant-b-key-0123456789")).status, 200);
    const refused = await send("POST", "/threads/prune", { thread_ids: [], strategy: "all" });
    assert.equal(refused.status, 422);
  });
});

describe("store", () => {
  test("put, get, search, list namespaces, delete: the store graphs read", async () => {
    await client.store.putItem(["users", "ann"], "prefs", { theme: "dark" });
    await client.store.putItem(["users", "bob"], "prefs", { theme: "light" });
    const item = await client.store.getItem(["users", "ann"], "prefs");
    assert.deepEqual(item?.value, { theme: "dark" });
    const searched = await client.store.searchItems(["users"], { filter: { theme: "light" } });
    assert.deepEqual(
      searched.items.map((found) => found.namespace),
      [["users", "bob"]],
    );
    const namespaces = await client.store.listNamespaces({ prefix: ["users"] });
    assert.deepEqual(namespaces.namespaces.sort(), [
      ["users", "ann"],
      ["users", "bob"],
    ]);
    await client.store.deleteItem(["users", "ann"], "prefs");
    assert.equal((await send("GET", "/store/items?namespace=users.ann&key=prefs")).status, 404);
  });

  test("an item's own ttl (minutes): there, then gone; a non-positive one is refused", async () => {
    await client.store.putItem(["users", "cy"], "session", { open: true }, { ttl: 0.005 });
    assert.deepEqual((await client.store.getItem(["users", "cy"], "session"))?.value, { open: true });
    // Reads with refresh_ttl=false leave the 300 ms running.
    await eventually(
      async () => assert.equal((await send("GET", "/store/items?namespace=users.cy&key=session&refresh_ttl=false")).status, 404),
      5_000,
    );
    const refused = await send("PUT", "/store/items", { namespace: ["users"], key: "k", value: {}, ttl: 0 });
    assert.equal(refused.status, 422);
    assert.match(((await refused.json()) as { detail: string }).detail, /ttl must be more than 0 minutes, or null for none/u);
  });
});

describe("bad input and tenants", () => {
  test("each mistake is a clear 4xx in the protocol's shape", async () => {
    const thread = await client.threads.create();
    const cases: [string, string, unknown, number, RegExp][] = [
      ["POST", "/runs/wait", { assistant_id: "nobody", input: {} }, 404, /No assistant with id 'nobody'/u],
      ["POST", `/threads/${thread.thread_id}/runs/wait`, { assistant_id: "echo", stream_mode: "everything" }, 422, /stream_mode/u],
      ["POST", "/runs/wait", { input: {} }, 422, /assistant_id/u],
      // With a command the input is not read, as on LangGraph's server: here, a resume of nothing.
      ["POST", "/runs/wait", { assistant_id: "echo", input: user("x"), command: { resume: 1 } }, 409, /not waiting on an interrupt/u],
      [
        "POST",
        `/threads/${thread.thread_id}/runs/wait`,
        { assistant_id: "memory", command: { resume: "yes" } },
        409,
        /not waiting on an interrupt/u,
      ],
      ["POST", "/threads/nope/runs/wait", { assistant_id: "echo", input: user("x") }, 404, /No thread with id 'nope'/u],
      ["GET", `/threads/${thread.thread_id}/runs/nope`, undefined, 404, /No run with id 'nope'/u],
      ["PUT", "/store/items", { namespace: ["a", ""], key: "k", value: {} }, 422, /must not be empty/u],
      ["PUT", "/store/items", { namespace: [1], key: "k", value: {} }, 422, /namespace\.0/u],
      ["POST", "/threads/search", { limit: "ten" }, 422, /limit/u],
      ["POST", "/threads", "{not json", 400, /JSON/u],
      ["POST", "/threads", { thread_id: "__proto__" }, 422, /thread_id: must be a UUID/u],
      [
        "POST",
        "/runs/wait",
        { assistant_id: "echo", input: { messages: [{ role: "", content: "x" }] } },
        422,
        /input\.messages\.0 is not a message/u,
      ],
    ];
    for (const [method, path, body, status, detail] of cases) {
      const response = await send(method, path, body);
      const answer = (await response.json()) as { detail?: string };
      assert.equal(response.status, status, `${method} ${path} ${JSON.stringify(body)}: ${JSON.stringify(answer)}`);
      assert.match(String(answer.detail), detail, `${method} ${path}`);
      assert.deepEqual(Object.keys(answer), ["detail"]);
    }
    // A thread that has run: an update LangGraph refuses is the client's to fix, and the thread stays readable.
    await client.runs.wait(thread.thread_id, "echo", { input: user("ran") });
    for (const update of [
      { values: 1.5, as_node: "respond" },
      { values: { messages: [{ type: "nobody", content: "x" }] } },
      { values: {}, as_node: "missing" },
    ]) {
      const refused = await send("POST", `/threads/${thread.thread_id}/state`, update);
      assert.equal(refused.status, 422, JSON.stringify(update));
    }
    assert.equal(lastText((await client.threads.getState(thread.thread_id)).values), "ran");
    const unauthenticated = await fetch(`${server.origin}/threads/search`, { method: "POST" });
    assert.equal(unauthenticated.status, 401);
    assert.deepEqual(Object.keys((await unauthenticated.json()) as object), ["detail"]);
    assert.equal((await fetch(`${server.origin}/ok`)).status, 200, "the probe needs no key");
  });

  test("another tenant's threads, runs and store items do not exist for it", async () => {
    const thread = await client.threads.create({ metadata: { secret: true } });
    const run = await client.runs.create(thread.thread_id, "echo", { input: user("mine") });
    await client.runs.join(thread.thread_id, run.run_id);
    await client.store.putItem(["notes"], "n1", { text: "tenant a" });
    const other = new Client({ apiUrl: server.origin, apiKey: "tenant-b-key-0123456789" });
    for (const call of [
      other.threads.get(thread.thread_id),
      other.threads.getState(thread.thread_id),
      other.runs.get(thread.thread_id, run.run_id),
      other.runs.wait(thread.thread_id, "echo", { input: user("theirs") }),
    ]) {
      await assert.rejects(call, /404/u);
    }
    assert.deepEqual(await other.threads.search({ metadata: { secret: true } }), []);
    assert.equal(await other.store.getItem(["notes"], "n1").catch(() => null), null);
    assert.deepEqual((await other.store.listNamespaces()).namespaces, []);
    // Tenant b may use the same thread id for a thread of its own.
    const own = await other.threads.create({ threadId: thread.thread_id });
    assert.equal(lastText(await other.runs.wait(own.thread_id, "echo", { input: user("theirs") })), "theirs");
    assert.equal(lastText((await client.threads.get(thread.thread_id)).values), "mine");
  });
});
