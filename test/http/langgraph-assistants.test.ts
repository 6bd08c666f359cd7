import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { AIMessage } from "@langchain/core/messages";
import { type LangGraphRunnableConfig, MessagesAnnotation, StateGraph } from "@langchain/langgraph";
import { Client } from "@langchain/langgraph-sdk";
import { startTestServer, type TestServer, TWO_TENANTS } from "../helpers/server.js";

// Assistants a client makes on the Agent Protocol, through the SDK's Client: created on a
// graph, updated into new versions, one made current again, searched, counted and deleted;
// a run of one gets its config and context under the run's own. Each tenant has its own.

/** Says what its config and context hold. */
const told = new StateGraph(MessagesAnnotation)
  .addNode("say", (_state, config: LangGraphRunnableConfig) => {
    const { mood } = (config.configurable ?? {}) as { mood?: string };
    const { lang } = (config.context ?? {}) as { lang?: string };
    return { messages: [new AIMessage(`mood=${mood ?? "-"} lang=${lang ?? "-"}`)] };
  })
  .addEdge("__start__", "say")
  .compile();

const input = { messages: [{ role: "user", content: "hi" }] };
const last = (values: unknown) => (values as { messages: { content: string }[] }).messages.at(-1)?.content;

let server: TestServer;
let client: Client;
let other: Client;

before(async () => {
  server = await startTestServer(
    { told: { graph: told, description: "Says its config" } },
    {
      langgraph: true,
      auth: TWO_TENANTS.auth,
    },
  );
  client = new Client({ apiUrl: server.origin, apiKey: "tenant-a-key-0123456789" });
  other = new Client({ apiUrl: server.origin, apiKey: "tenant-b-key-0123456789" });
});
after(() => server.close());

describe("assistants a client makes", () => {
  test("created, run with its config and context under the run's own, updated into versions, one made current again", async () => {
    const made = await client.assistants.create({
      graphId: "told",
      name: "Cheerful",
      config: { configurable: { mood: "cheerful" } },
      context: { lang: "fr" },
      metadata: { team: "blue" },
    });
    assert.equal(made.version, 1);
    assert.equal(made.graph_id, "told");
    const thread = await client.threads.create();
    assert.equal(last(await client.runs.wait(thread.thread_id, made.assistant_id, { input })), "mood=cheerful lang=fr");
    // The run's own config and context win over the assistant's.
    const own = await client.runs.wait(null, made.assistant_id, { input, context: { lang: "de" } });
    assert.equal(last(own), "mood=cheerful lang=de");
    assert.equal((await client.threads.get(thread.thread_id)).metadata?.assistant_id, made.assistant_id);

    const updated = await client.assistants.update(made.assistant_id, {
      config: { configurable: { mood: "grumpy" } },
      metadata: { tier: 2 },
    });
    assert.equal(updated.version, 2);
    assert.deepEqual(updated.metadata, { team: "blue", tier: 2 });
    assert.equal(last(await client.runs.wait(null, made.assistant_id, { input })), "mood=grumpy lang=fr");
    const versions = await client.assistants.getVersions(made.assistant_id);
    assert.deepEqual(
      versions.map((version) => version.version),
      [2, 1],
    );
    const back = await client.assistants.setLatest(made.assistant_id, 1);
    assert.equal(back.version, 1);
    assert.equal(last(await client.runs.wait(null, made.assistant_id, { input })), "mood=cheerful lang=fr");
    assert.equal((await client.assistants.update(made.assistant_id, { name: "Third" })).version, 3);
  });

  test("searched and counted with the system assistants; deleted; another tenant never sees them", async () => {
    const made = await client.assistants.create({ graphId: "told", name: "Findable", metadata: { kind: "search-me" } });
    const found = await client.assistants.search({ metadata: { kind: "search-me" } });
    assert.deepEqual(
      found.map((assistant) => assistant.assistant_id),
      [made.assistant_id],
    );
    assert.ok((await client.assistants.search({ graphId: "told" })).some((assistant) => assistant.metadata?.created_by === "system"));
    assert.equal(await client.assistants.count({ metadata: { kind: "search-me" } }), 1);
    assert.equal(await other.assistants.count({ metadata: { kind: "search-me" } }), 0);
    await assert.rejects(other.assistants.get(made.assistant_id), /404/u);
    await assert.rejects(other.runs.wait(null, made.assistant_id, { input }), /404/u);
    await client.assistants.delete(made.assistant_id);
    await assert.rejects(client.assistants.get(made.assistant_id), /404/u);
    await assert.rejects(client.runs.wait(null, made.assistant_id, { input }), /404/u);
  });

  test("bad input: an unknown graph, a taken id, a system assistant changed, a version not there", async () => {
    const send = (method: string, path: string, body?: unknown) =>
      fetch(`${server.origin}${path}`, {
        method,
        headers: { "x-api-key": "tenant-a-key-0123456789", "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const unknown = await send("POST", "/assistants", { graph_id: "nope" });
    assert.equal(unknown.status, 422);
    assert.match(((await unknown.json()) as { detail: string }).detail, /graph_id: no graph 'nope' is served here; the graphs are: told/u);
    const made = await client.assistants.create({ graphId: "told" });
    assert.equal((await send("POST", "/assistants", { graph_id: "told", assistant_id: made.assistant_id })).status, 409);
    const kept = await client.assistants.create({ graphId: "told", assistantId: made.assistant_id, ifExists: "do_nothing" });
    assert.equal(kept.assistant_id, made.assistant_id);
    const system = await send("PATCH", "/assistants/told", { name: "mine" });
    assert.equal(system.status, 409);
    assert.match(((await system.json()) as { detail: string }).detail, /system assistant of told, which cannot be changed or deleted/u);
    assert.equal((await send("POST", `/assistants/${made.assistant_id}/latest`, { version: 9 })).status, 404);
    assert.equal((await send("POST", `/assistants/${made.assistant_id}/latest`, {})).status, 422);
  });
});
