import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, jsonSchema, streamText, tool } from "ai";
import { graph as toolsGraph } from "../../demo/graphs/tools.js";
import { echoGraph } from "../fixtures/graphs.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// The Vercel AI SDK validates every chunk it parses: a strict client of the wire format.
let server: TestServer;
let provider: ReturnType<typeof createOpenAICompatible>;
before(async () => {
  server = await startTestServer({
    echo: { graph: echoGraph, description: "Echo", streamableNodeNames: ["respond"] },
    tools: { graph: toolsGraph, description: "Tools", streamableNodeNames: ["agent"] },
  });
  provider = createOpenAICompatible({ name: "chat-serve", baseURL: server.baseURL, includeUsage: true });
});
after(() => server.close());

test("generateText: text and usage", async () => {
  const result = await generateText({ model: provider("echo"), prompt: "hello from the ai sdk" });
  assert.equal(result.text, "hello from the ai sdk");
  assert.equal(result.usage.totalTokens, 10);
  assert.equal(result.finishReason, "stop");
});

test("streamText: the same text and usage from the final usage chunk", async () => {
  const result = streamText({ model: provider("echo"), prompt: "stream this please" });
  let text = "";
  for await (const part of result.textStream) text += part;
  assert.equal(text, "stream this please");
  assert.equal((await result.usage).totalTokens, 6);
});

test("the graph's tool calls reach the SDK as tool calls", async () => {
  const weather = tool({
    description: "weather of a city",
    inputSchema: jsonSchema<{ city: string }>({ type: "object", properties: { city: { type: "string" } }, required: ["city"] }),
  });
  const result = await generateText({ model: provider("tools"), prompt: "What is the weather in Lima?", tools: { get_weather: weather } });
  assert.equal(result.finishReason, "tool-calls");
  assert.deepEqual(
    result.toolCalls.map((call) => [call.toolName, call.input]),
    [["get_weather", { city: "Lima" }]],
  );
});
