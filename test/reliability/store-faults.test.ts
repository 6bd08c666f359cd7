import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import OpenAI from "openai";
import pg from "pg";
import { ChatServe } from "../../src/app/chat-serve.js";
import { GraphRegistry } from "../../src/registry/graph-registry.js";
import { backendsFromConfig } from "../../src/server/backends.js";
import { dropSchema, POSTGRES_URL, requirePostgres, uniqueSchema } from "../helpers/services.js";
import { startPostgresProxy } from "../helpers/tcp-proxy.js";

// The Postgres store behind a proxy the test controls: a stalled store is 503
// backend_unavailable within the deadline, before any graph runs where it can be, and a
// response whose store write failed is not half-stored (no response without its items, no
// conversation items without their response).

const postgres = await requirePostgres();
const TIMEOUT_MS = 800;

const cleanups: (() => unknown)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe("the Postgres store, stalled", { skip: postgres.skip, timeout: 60_000 }, () => {
  test("503 within the deadline on every endpoint; a run whose answer cannot be stored leaves nothing half-written", async () => {
    const { proxy, url } = await startPostgresProxy(POSTGRES_URL);
    cleanups.push(() => proxy.stop());
    const schema = uniqueSchema();
    cleanups.push(() => dropSchema(schema));
    const backends = await backendsFromConfig(
      {
        checkpointer: { kind: "memory" },
        coordinator: { kind: "memory" },
        store: { kind: "postgres", url, schema, expireAfter: "30d", sweepEvery: "10m" },
      },
      { timeoutMs: TIMEOUT_MS },
    );
    cleanups.push(() => backends.close());
    await backends.setup();

    let runs = 0;
    let gate: Promise<void> = Promise.resolve();
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("respond", async (state) => {
        runs += 1;
        await gate;
        return { messages: [new AIMessage(`echo: ${state.messages.at(-1)?.text}`)] };
      })
      .addEdge(START, "respond")
      .addEdge("respond", END)
      .compile();
    const registry = new GraphRegistry({ echo: { graph, description: "echo" } }, { store: backends.store });
    const serve = new ChatServe({ graphs: registry, backendTimeoutMs: TIMEOUT_MS });
    const app = await serve.bind({ prefix: "/v1" });
    const origin = await app.listen({ host: "127.0.0.1", port: 0 });
    cleanups.push(() => app.close());
    const client = new OpenAI({ baseURL: `${origin}/v1`, apiKey: "x", maxRetries: 0, timeout: 10_000 });

    const stored = await client.responses.create({ model: "echo", input: "kept" });
    const conversation = await client.conversations.create({ items: [{ role: "user", content: "seeded" }] });

    proxy.blackhole();
    const unavailable = async (what: string, call: () => Promise<unknown>) => {
      const started = performance.now();
      await assert.rejects(call(), (error: InstanceType<typeof OpenAI.APIError>) => {
        assert.equal(error.status, 503, `${what}: ${error.message}`);
        assert.equal(error.code, "backend_unavailable", what);
        return true;
      });
      const elapsed = performance.now() - started;
      assert.ok(elapsed < TIMEOUT_MS * 3, `${what} answered in ${Math.round(elapsed)} ms`);
    };
    const before = runs;
    await unavailable("retrieve", () => client.responses.retrieve(stored.id));
    await unavailable("input items", () => client.responses.inputItems.list(stored.id));
    await unavailable("delete", () => client.responses.delete(stored.id));
    await unavailable("continue", () => client.responses.create({ model: "echo", previous_response_id: stored.id, input: "x" }));
    await unavailable("conversation turn", () => client.responses.create({ model: "echo", conversation: conversation.id, input: "x" }));
    await unavailable("create conversation", () => client.conversations.create({}));
    await unavailable("list items", () => client.conversations.items.list(conversation.id));
    assert.equal(runs, before, "no graph ran for a request whose stored context could not be read");

    // The run finishes while the store is down: its answer cannot be stored, so the client is told.
    await unavailable("a new response", () => client.responses.create({ model: "echo", input: "lost" }));
    proxy.restore();

    // A conversation turn whose write fails after the run: neither its response nor its items land.
    let open: () => void = () => {};
    gate = new Promise((resolve) => {
      open = resolve;
    });
    const turn = client.responses.create({ model: "echo", conversation: conversation.id, input: "half" });
    while (runs === before + 1) await new Promise((resolve) => setTimeout(resolve, 10));
    proxy.blackhole();
    open();
    await assert.rejects(turn, (error: InstanceType<typeof OpenAI.APIError>) => error.status === 503);
    proxy.restore();
    gate = Promise.resolve();

    const items = await client.conversations.items.list(conversation.id);
    assert.equal(items.data.length, 1, "only the seeded item: nothing of the failed turn");
    const check = new pg.Client({ connectionString: POSTGRES_URL });
    await check.connect();
    try {
      const { rows } = await check.query(`SELECT count(*)::int AS count FROM "${schema}".chat_serve_responses`);
      assert.equal(rows[0].count, 1, "only the response made while the store was up");
    } finally {
      await check.end();
    }
    assert.equal((await client.responses.retrieve(stored.id)).output_text, "echo: kept", "back to normal");
  });
});
