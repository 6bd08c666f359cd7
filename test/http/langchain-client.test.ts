import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { HumanMessage } from "@langchain/core/messages";
import { ChatOpenAI } from "@langchain/openai";
import { graph as toolsGraph } from "../../demo/graphs/tools.js";
import { echoGraph } from "../fixtures/graphs.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// LangChain's own OpenAI chat model, pointed at chat-serve: a graph served as a model can be
// used inside another LangChain app or graph.
let server: TestServer;
before(async () => {
  server = await startTestServer({
    echo: { graph: echoGraph, description: "Echo", streamableNodeNames: ["respond"] },
    tools: { graph: toolsGraph, description: "Tools", streamableNodeNames: ["agent"] },
  });
});
after(() => server.close());

const model = (name: string) =>
  new ChatOpenAI({ model: name, apiKey: "not-checked", configuration: { baseURL: server.baseURL }, maxRetries: 0 });

test("ChatOpenAI invoke: text and usage_metadata", async () => {
  const reply = await model("echo").invoke([new HumanMessage("served graphs are models too")]);
  assert.equal(reply.text, "served graphs are models too");
  assert.equal(reply.usage_metadata?.total_tokens, 10);
});

test("ChatOpenAI stream: the chunks add up to the same text", async () => {
  let text = "";
  for await (const chunk of await model("echo").stream([new HumanMessage("one two three")])) text += chunk.text;
  assert.equal(text, "one two three");
});

test("ChatOpenAI sees the graph's tool calls as its own", async () => {
  const reply = await model("tools").invoke([new HumanMessage("What is the weather in Rome?")]);
  assert.deepEqual(
    reply.tool_calls?.map((call) => [call.name, call.args]),
    [["get_weather", { city: "Rome" }]],
  );
});
