import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import OpenAI from "openai";
import { graph as plainGraph } from "../../demo/graphs/plain.js";
import { graph as toolsGraph } from "../../demo/graphs/tools.js";
import { echoGraph, nestedStreamGraph, nostreamGraph, partialStreamGraph, twoStepGraph } from "../fixtures/graphs.js";
import { assertMatchesOpenAI } from "../helpers/openai-schema.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

let server: TestServer;
let client: OpenAI;

before(async () => {
  server = await startTestServer({
    echo: { graph: echoGraph, description: "Echo", streamableNodeNames: ["respond"] },
    "two-step": { graph: twoStepGraph(), description: "Draft then answer", streamableNodeNames: ["respond"] },
    partial: { graph: partialStreamGraph(), description: "Streams part", streamableNodeNames: ["respond"] },
    plain: { graph: plainGraph, description: "Plain" },
    nested: { graph: nestedStreamGraph(), description: "Streams from a subgraph", streamableNodeNames: ["agent"] },
    nostream: { graph: nostreamGraph(), description: "Hides one model call", streamableNodeNames: ["respond"] },
    tools: { graph: toolsGraph, description: "Tools", streamableNodeNames: ["agent"], features: ["CLIENT_EVENTS"] },
  });
  client = new OpenAI({ baseURL: server.baseURL, apiKey: "any value works", maxRetries: 0 });
});
after(() => server.close());

async function streamed(model: string, content: string, extra: Record<string, unknown> = {}) {
  const stream = await client.chat.completions.create({
    model,
    messages: [{ role: "user", content }],
    stream: true,
    ...extra,
  });
  const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("");
  return { chunks, text };
}

describe("models", () => {
  test("models.list returns every graph with the summary extension and no settings descriptor", async () => {
    const page = await client.models.list();
    const ids = page.data.map((model) => model.id);
    assert.deepEqual(ids, ["echo", "two-step", "partial", "plain", "nested", "nostream", "tools"]);
    const raw = (await (await fetch(`${server.baseURL}/models`)).json()) as { data: Record<string, any>[] };
    assertMatchesOpenAI("ListModelsResponse", raw);
    const tools = raw.data.find((model) => model.id === "tools")!;
    assert.deepEqual(tools.graph_chat_serve, { schema_version: 1, description: "Tools", features: ["client_events"] });
    assert.equal(tools.owned_by, "chat-serve");
    for (const model of raw.data) assert.equal(model.graph_chat_serve.client_settings, undefined);
  });

  test("models.retrieve returns the full extension with capabilities", async () => {
    const model = (await client.models.retrieve("tools")) as unknown as Record<string, any>;
    assertMatchesOpenAI("Model", model);
    assert.equal(model.id, "tools");
    assert.deepEqual(model.graph_chat_serve.capabilities, {
      client_events: {
        opt_in: { metadata_key: "graph_stream_events", versions: ["v1"] },
        types: ["status", "progress", "artifact"],
      },
    });
    const echo = (await client.models.retrieve("echo")) as unknown as Record<string, any>;
    assert.deepEqual(echo.graph_chat_serve.capabilities, {});
  });

  test("models.retrieve of an unknown model is a 404 model_not_found", async () => {
    await assert.rejects(client.models.retrieve("missing"), (error: InstanceType<typeof OpenAI.NotFoundError>) => {
      assert.equal(error.status, 404);
      assert.equal(error.code, "model_not_found");
      assert.equal(error.param, "model");
      return true;
    });
  });
});

describe("complete responses", () => {
  test("echo answers with the user's text, reported usage, and a schema-valid body", async () => {
    const completion = await client.chat.completions.create({
      model: "echo",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "hello from the test" },
      ],
    });
    assertMatchesOpenAI("CreateChatCompletionResponse", completion);
    assert.match(completion.id, /^chatcmpl-/);
    assert.equal(completion.object, "chat.completion");
    assert.equal(completion.model, "echo");
    assert.equal(completion.choices[0]?.message.content, "hello from the test");
    assert.equal(completion.choices[0]?.finish_reason, "stop");
    // Prompt: "Be brief." (2) + "hello from the test" (4); reply: 4.
    assert.deepEqual(completion.usage, { prompt_tokens: 6, completion_tokens: 4, total_tokens: 10 });
  });

  test("content parts are accepted and reach the graph", async () => {
    const completion = await client.chat.completions.create({
      model: "echo",
      messages: [{ role: "user", content: [{ type: "text", text: "from parts" }] }],
    });
    assert.equal(completion.choices[0]?.message.content, "from parts");
  });

  test("a final tool call arrives with finish_reason tool_calls", async () => {
    const completion = await client.chat.completions.create({
      model: "tools",
      messages: [{ role: "user", content: "What is the weather in Oslo?" }],
      tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object" } } }],
    });
    assertMatchesOpenAI("CreateChatCompletionResponse", completion);
    const choice = completion.choices[0]!;
    assert.equal(choice.finish_reason, "tool_calls");
    assert.equal(choice.message.content, null);
    const call = choice.message.tool_calls?.[0];
    assert.ok(call && call.type === "function");
    assert.equal(call.function.name, "get_weather");
    assert.deepEqual(JSON.parse(call.function.arguments), { city: "Oslo" });
  });

  test("a tool result in the conversation is graph input", async () => {
    const completion = await client.chat.completions.create({
      model: "tools",
      messages: [
        { role: "user", content: "weather in Oslo?" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }],
        },
        { role: "tool", tool_call_id: "call_1", content: "sunny, 21 degrees" },
      ],
    });
    assert.equal(completion.choices[0]?.message.content, "The weather tool says: sunny, 21 degrees");
    assert.equal(completion.choices[0]?.finish_reason, "stop");
  });
});

describe("streaming", () => {
  for (const [model, prompt] of [
    ["echo", "one two three four"],
    ["two-step", "streamed only once"],
    ["partial", "anything"],
    ["plain", "hi"],
    ["tools", "weather in Rome"],
  ] as const) {
    test(`${model}: the streamed text equals the complete text and every chunk is schema-valid`, async () => {
      const complete = await client.chat.completions.create({ model, messages: [{ role: "user", content: prompt }] });
      const { chunks, text } = await streamed(model, prompt);
      assert.equal(text, complete.choices[0]?.message.content ?? "");
      for (const chunk of chunks) assertMatchesOpenAI("CreateChatCompletionStreamResponse", chunk);
      assert.deepEqual(chunks[0]?.choices[0]?.delta, { role: "assistant", content: "" });
      const ids = new Set(chunks.map((chunk) => `${chunk.id}/${chunk.created}/${chunk.model}`));
      assert.equal(ids.size, 1, "every chunk shares id, created and model");
      const last = chunks.at(-1)!;
      assert.equal(last.choices[0]?.finish_reason, complete.choices[0]?.finish_reason);
      for (const chunk of chunks.slice(0, -1)) assert.equal(chunk.choices[0]?.finish_reason, null);
    });
  }

  test("echo streams word by word from the streamable node", async () => {
    const { chunks } = await streamed("echo", "alpha beta gamma");
    const deltas = chunks.map((chunk) => chunk.choices[0]?.delta.content).filter((content) => content);
    assert.deepEqual(deltas, ["alpha ", "beta ", "gamma"]);
  });

  test("listing a subgraph node streams the tokens of the model calls inside it", async () => {
    const { chunks, text } = await streamed("nested", "deep inside");
    const deltas = chunks.map((chunk) => chunk.choices[0]?.delta.content).filter((content) => content);
    assert.deepEqual(deltas, ["nested: ", "deep ", "inside"]);
    assert.equal(text, "nested: deep inside");
  });

  test("model calls tagged nostream never reach the stream, even in a streamable node", async () => {
    const { chunks, text } = await streamed("nostream", "x");
    const deltas = chunks.map((chunk) => chunk.choices[0]?.delta.content).filter((content) => content);
    assert.deepEqual(deltas, ["public ", "answer"]);
    assert.equal(text, "public answer");
  });

  test("tokens of a node that is not streamable never reach the stream", async () => {
    const { text } = await streamed("two-step", "question");
    assert.equal(text, "final: question");
    assert.doesNotMatch(text, /draft/);
  });

  test("tool calls stream as one delta before the finish chunk", async () => {
    const { chunks } = await streamed("tools", "weather in Lima");
    const withCalls = chunks.filter((chunk) => chunk.choices[0]?.delta.tool_calls);
    assert.equal(withCalls.length, 1);
    const [call] = withCalls[0]!.choices[0]!.delta.tool_calls!;
    assert.equal(call?.index, 0);
    assert.equal(call?.function?.name, "get_weather");
    assert.deepEqual(JSON.parse(call?.function?.arguments ?? ""), { city: "Lima" });
    assert.equal(chunks.at(-1)?.choices[0]?.finish_reason, "tool_calls");
  });

  test("include_usage adds a final usage-only chunk and usage: null before it", async () => {
    const { chunks } = await streamed("echo", "count these four", { stream_options: { include_usage: true } });
    const last = chunks.at(-1)!;
    assert.deepEqual(last.choices, []);
    assert.deepEqual(last.usage, { prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 });
    for (const chunk of chunks.slice(0, -1)) assert.equal(chunk.usage, null);
  });

  test("without include_usage no chunk carries usage", async () => {
    const { chunks } = await streamed("echo", "no usage please");
    for (const chunk of chunks) assert.equal("usage" in chunk, false);
  });

  test("stream headers: event stream, no cache, no proxy buffering, a request id", async () => {
    const response = await fetch(`${server.baseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-request-id": "stream-request-1" },
      body: JSON.stringify({ model: "echo", stream: true, messages: [{ role: "user", content: "hi" }] }),
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type") ?? "", /^text\/event-stream/);
    assert.equal(response.headers.get("cache-control"), "no-cache");
    assert.equal(response.headers.get("x-accel-buffering"), "no");
    assert.equal(response.headers.get("x-request-id"), "stream-request-1");
    const body = await response.text();
    assert.ok(body.endsWith("data: [DONE]\n\n"));
  });
});
