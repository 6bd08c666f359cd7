import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { AIMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import OpenAI from "openai";
import { z } from "zod";
import { ScriptedChatModel } from "../../src/testing/scripted-chat-model.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// Two model calls: one in a nested subgraph (10 + 5 tokens, 4 of them cached, 2 reasoning),
// one inside a tool the outer graph calls (7 + 3 tokens).
function twoCallGraph() {
  const first = new ScriptedChatModel({
    respond: () => "first",
    usage: () => ({ input: 10, output: 5, cachedInput: 4, reasoning: 2 }),
  });
  const second = new ScriptedChatModel({ respond: () => "second answer", usage: () => ({ input: 7, output: 3 }) });
  const summarize = tool(async (_input, config) => (await second.invoke("summarize", config)).text, {
    name: "summarize",
    description: "asks another model",
    schema: z.object({}),
  });
  const inner = new StateGraph(MessagesAnnotation)
    .addNode("think", async (state, config) => {
      await first.invoke(state.messages, config);
      return {};
    })
    .addEdge(START, "think")
    .addEdge("think", END)
    .compile();
  return new StateGraph(MessagesAnnotation)
    .addNode("inner", inner)
    .addNode("respond", async (_state, config) => {
      const text = await summarize.invoke({}, config);
      return { messages: [new AIMessage(text)] };
    })
    .addEdge(START, "inner")
    .addEdge("inner", "respond")
    .addEdge("respond", END)
    .compile();
}

const expected = {
  prompt_tokens: 17,
  completion_tokens: 8,
  total_tokens: 25,
  prompt_tokens_details: { cached_tokens: 4 },
  completion_tokens_details: { reasoning_tokens: 2 },
};

let server: TestServer;
let client: OpenAI;
before(async () => {
  server = await startTestServer({
    usage: { graph: twoCallGraph(), description: "Two model calls" },
    "no-usage": {
      graph: new StateGraph(MessagesAnnotation)
        .addNode("n", async () => ({ messages: [new AIMessage("no model here")] }))
        .addEdge(START, "n")
        .addEdge("n", END)
        .compile(),
      description: "No model",
    },
  });
  client = new OpenAI({ baseURL: server.baseURL, apiKey: "x", maxRetries: 0 });
});
after(() => server.close());

const messages = [{ role: "user" as const, content: "go" }];

test("usage is summed over every model call of the run, nested subgraphs and tools included", async () => {
  const completion = await client.chat.completions.create({ model: "usage", messages });
  assert.equal(completion.choices[0]?.message.content, "second answer");
  assert.deepEqual(completion.usage, expected);
});

test("streaming with include_usage reports the same totals in the final usage-only chunk", async () => {
  const stream = await client.chat.completions.create({
    model: "usage",
    messages,
    stream: true,
    stream_options: { include_usage: true },
  });
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  assert.deepEqual(chunks.at(-1)?.choices, []);
  assert.deepEqual(chunks.at(-1)?.usage, expected);
});

test("no model reported usage: omitted from a completion, zeros in the usage chunk asked for; never estimated", async () => {
  const completion = await client.chat.completions.create({ model: "no-usage", messages });
  assert.equal(completion.usage, undefined);
  const stream = await client.chat.completions.create({
    model: "no-usage",
    messages,
    stream: true,
    stream_options: { include_usage: true },
  });
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  assert.ok(chunks.slice(0, -1).every((chunk) => chunk.usage === null));
  assert.equal(chunks.at(-2)?.choices[0]?.finish_reason, "stop");
  // A client that parses usage as an object (opencode's, Kilo's) gets one.
  assert.deepEqual(chunks.at(-1)?.choices, []);
  assert.deepEqual(chunks.at(-1)?.usage, { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
});
