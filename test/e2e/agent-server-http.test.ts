import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import { type RunningServer, startCli } from "../helpers/cli.js";
import { tempProject } from "../helpers/temp-project.js";

// langgraph.json's `http` block as LangGraph's Agent Server reads it: everything of LangGraph's
// under `mount_prefix` (the protocol and the project's routes), route groups and MCP turned off,
// CORS for one origin with cookies, and the request headers a run finds in `config.configurable`.

const GRAPH = `
import { AIMessage } from "@langchain/core/messages";
import { MessagesAnnotation, StateGraph } from "@langchain/langgraph";
// Answers with the request headers the run was given.
export const graph = new StateGraph(MessagesAnnotation)
  .addNode("answer", (_state, config) => {
    const headers = Object.fromEntries(Object.entries(config.configurable ?? {}).filter(([key]) => key.startsWith("x-") || key === "user-agent"));
    return { messages: [new AIMessage(JSON.stringify(headers))] };
  })
  .addEdge("__start__", "answer")
  .compile();
`;

const APP = `
import { Hono } from "hono";
export const app = new Hono();
app.get("/hello", (c) => c.json({ hello: "world", path: c.req.path }));
`;

const LANGGRAPH_JSON = {
  graphs: { agent: "./agent.ts:graph" },
  http: {
    app: "./app.ts:app",
    mount_prefix: "/api",
    disable_store: true,
    disable_mcp: true,
    cors: { allow_origins: ["https://app.example"], allow_credentials: true },
    configurable_headers: { includes: ["x-org-*", "user-agent"], excludes: ["x-org-secret"] },
  },
};

describe("langgraph.json's http: mount_prefix, disable_*, cors, configurable_headers", { timeout: 60_000 }, () => {
  let server: RunningServer;
  let origin: string;
  const project = tempProject({ "langgraph.json": JSON.stringify(LANGGRAPH_JSON), "agent.ts": GRAPH, "app.ts": APP });

  before(async () => {
    server = await startCli([], { cwd: project.dir });
    origin = new URL(server.baseURL).origin;
  });
  after(async () => {
    await server?.stop();
    project.cleanup();
  });

  test("the start names what langgraph.json's http changed", () => {
    assert.match(
      server.output(),
      /routes from \.\/app\.ts:app, everything of LangGraph's under \/api, store, mcp off from langgraph\.json/u,
    );
    assert.doesNotMatch(server.output(), /ignored: .*http/u);
  });

  test("the protocol and the project's routes are under the prefix, and nowhere else", async () => {
    assert.equal((await fetch(`${origin}/api/info`)).status, 200);
    assert.equal((await fetch(`${origin}/info`)).status, 404);
    const hello = await fetch(`${origin}/api/hello`);
    assert.equal(hello.status, 200);
    // The app sees its own path: the prefix is the server's.
    assert.deepEqual(await hello.json(), { hello: "world", path: "/hello" });
    assert.equal((await fetch(`${origin}/hello`)).status, 404);
  });

  test("a run gets the headers the project lets through, and no others", async () => {
    const client = new Client({
      apiUrl: `${origin}/api`,
      defaultHeaders: { "x-org-id": "acme", "x-org-secret": "hidden", "x-other": "left out", "user-agent": "agent-server-test" },
    });
    const thread = await client.threads.create();
    const state = (await client.runs.wait(thread.thread_id, "agent", { input: { messages: [{ role: "user", content: "hi" }] } })) as {
      messages: { content: string }[];
    };
    assert.deepEqual(JSON.parse(state.messages.at(-1)!.content), { "x-org-id": "acme", "user-agent": "agent-server-test" });
  });

  test("disable_store and disable_mcp: their routes are gone, the rest is served", async () => {
    const store = await fetch(`${origin}/api/store/items`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ namespace: ["a"], key: "k", value: {} }),
    });
    assert.equal(store.status, 404);
    assert.equal((await fetch(`${origin}/v1/mcp`, { method: "POST" })).status, 404);
    assert.equal((await fetch(`${origin}/api/threads/search`, { method: "POST" })).status, 200);
  });

  test("CORS: the named origin may send PATCH with cookies; another origin is not answered as allowed", async () => {
    const preflight = (from: string) =>
      fetch(`${origin}/api/threads/00000000-0000-0000-0000-000000000000`, {
        method: "OPTIONS",
        headers: { origin: from, "access-control-request-method": "PATCH", "access-control-request-headers": "content-type" },
      });
    const allowed = await preflight("https://app.example");
    assert.equal(allowed.status, 204);
    assert.equal(allowed.headers.get("access-control-allow-origin"), "https://app.example");
    assert.equal(allowed.headers.get("access-control-allow-credentials"), "true");
    assert.match(allowed.headers.get("access-control-allow-methods") ?? "", /PATCH/u);
    const other = await preflight("https://elsewhere.example");
    assert.equal(other.headers.get("access-control-allow-origin"), null);
    // A page may read where a run lives (useStream reads content-location).
    const answer = await fetch(`${origin}/api/info`, { headers: { origin: "https://app.example" } });
    assert.match(answer.headers.get("access-control-expose-headers") ?? "", /content-location/u);
  });
});
