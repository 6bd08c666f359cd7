import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import { AIMessage } from "@langchain/core/messages";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { Client } from "@langchain/langgraph-sdk";
import OpenAI from "openai";
import { connectMcp, resultText } from "../helpers/mcp.js";
import { startTestServer, type TestServer, TWO_TENANTS } from "../helpers/server.js";

// A graph that reads LangGraph's store (`config.store`, as the memory templates do) gets the
// same store on every surface: a count it keeps there goes up once per answer, whichever API
// asked, and the Agent Protocol's /store routes read what the OpenAI surfaces wrote. Each
// tenant has a store of its own: another tenant's graph counts from one.

const counter = new StateGraph(MessagesAnnotation)
  .addNode("count", async (_state, config: LangGraphRunnableConfig) => {
    const store = config.store;
    if (store === undefined) throw new Error("Store not found in configuration");
    const item = await store.get(["visits"], "count");
    const count = ((item?.value.count as number | undefined) ?? 0) + 1;
    await store.put(["visits"], "count", { count });
    return { messages: [new AIMessage(`visit ${count}`)] };
  })
  .addEdge(START, "count")
  .addEdge("count", END)
  .compile();

let server: TestServer;

before(async () => {
  server = await startTestServer(
    { counter: { graph: counter, description: "Counts its visits in the store" } },
    { langgraph: true, anthropic: true, mcp: true, a2a: true, auth: TWO_TENANTS.auth },
  );
});
after(() => server.close());

test("the store is the same on chat completions, Responses, Messages, MCP, A2A and the Agent Protocol", async () => {
  const key = TWO_TENANTS.a;
  const openai = new OpenAI({ baseURL: server.baseURL, apiKey: key, maxRetries: 0 });
  const seen: string[] = [];
  const completion = await openai.chat.completions.create({ model: "counter", messages: [{ role: "user", content: "hi" }] });
  seen.push(completion.choices[0]?.message.content ?? "");
  const response = await openai.responses.create({ model: "counter", input: "hi" });
  seen.push(response.output_text);
  const anthropic = new Anthropic({ baseURL: server.origin, apiKey: key, maxRetries: 0 });
  const message = await anthropic.messages.create({ model: "counter", max_tokens: 100, messages: [{ role: "user", content: "hi" }] });
  seen.push(message.content.map((block) => (block.type === "text" ? block.text : "")).join(""));
  const mcp = await connectMcp(`${server.baseURL}/mcp`, { headers: { authorization: `Bearer ${key}` } });
  try {
    seen.push(resultText(await mcp.client.callTool({ name: "counter", arguments: { message: "hi" } })));
  } finally {
    await mcp.close();
  }
  const a2a = await fetch(`${server.baseURL}/a2a/counter`, {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0", authorization: `Bearer ${key}` },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "SendMessage",
      params: { message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: "hi" }] }, configuration: { blocking: true } },
    }),
  });
  seen.push(/visit \d+/u.exec(await a2a.text())?.[0] ?? "no answer over A2A");
  const langgraph = new Client({ apiUrl: server.origin, apiKey: key });
  const waited = (await langgraph.runs.wait(null, "counter", { input: { messages: [{ role: "user", content: "hi" }] } })) as {
    messages: { content: string }[];
  };
  seen.push(waited.messages.at(-1)?.content ?? "");
  assert.deepEqual(seen, ["visit 1", "visit 2", "visit 3", "visit 4", "visit 5", "visit 6"]);
  const item = await langgraph.store.getItem(["visits"], "count");
  assert.deepEqual(item?.value, { count: 6 }, "the Agent Protocol's /store reads what every surface wrote");
});

test("each tenant's graphs read a store of their own, which its /store routes show; the server's label is refused", async () => {
  const other = new Client({ apiUrl: server.origin, apiKey: TWO_TENANTS.b });
  const waited = (await other.runs.wait(null, "counter", { input: { messages: [{ role: "user", content: "hi" }] } })) as {
    messages: { content: string }[];
  };
  assert.equal(waited.messages.at(-1)?.content, "visit 1", "tenant b counts from one: tenant a's count is not its");
  const openai = new OpenAI({ baseURL: server.baseURL, apiKey: TWO_TENANTS.b, maxRetries: 0 });
  const again = await openai.chat.completions.create({ model: "counter", messages: [{ role: "user", content: "hi" }] });
  assert.equal(again.choices[0]?.message.content, "visit 2");
  assert.deepEqual((await other.store.getItem(["visits"], "count"))?.value, { count: 2 });
  assert.deepEqual((await other.store.listNamespaces()).namespaces, [["visits"]], "its own namespaces, without the server's labels");
  await assert.rejects(other.store.putItem(["chat-serve-tenant", "a", "visits"], "count", { count: 100 }), /422/u);
});
