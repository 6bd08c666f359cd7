import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import OpenAI from "openai";
import { ResearchSettings, graph as researchGraph } from "../../demo/graphs/research.js";
import { clientEvent, statusEvent } from "../../src/events/emit.js";
import { ENVELOPE_KEY } from "../../src/events/envelope.js";
import { assertMatchesOpenAI } from "../helpers/openai-schema.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

type Chunk = OpenAI.Chat.Completions.ChatCompletionChunk & {
  graph_chat_serve?: { schema_version: number; event: { type: string; namespace: string[]; data: Record<string, unknown> } };
};

/** Emits a valid event, bad envelopes of several shapes, and unrelated custom data, inside a subgraph. */
function noisyGraph() {
  const inner = new StateGraph(MessagesAnnotation)
    .addNode("work", (_state, config) => {
      statusEvent("Working", { namespace: ["noisy"] });
      config.writer?.({ [ENVELOPE_KEY]: "v1", type: "toast", namespace: [], data: {} });
      config.writer?.({ [ENVELOPE_KEY]: "v1", type: "progress", namespace: [7], data: {} });
      config.writer?.({ [ENVELOPE_KEY]: "v1", type: "progress", namespace: [], data: { completed: Number.NaN } });
      config.writer?.({ unrelated: "custom data for direct consumers" });
      config.writer?.("a plain string");
      statusEvent("Worked", { done: true, namespace: ["noisy"] });
      return { messages: [new AIMessage("noisy answer")] };
    })
    .addEdge(START, "work")
    .addEdge("work", END)
    .compile();
  return new StateGraph(MessagesAnnotation).addNode("inner", inner).addEdge(START, "inner").addEdge("inner", END).compile();
}

const logLines: string[] = [];
let server: TestServer;
let client: OpenAI;

before(async () => {
  server = await startTestServer(
    {
      research: {
        graph: researchGraph,
        description: "Research",
        streamableNodeNames: ["answer"],
        clientSettings: ResearchSettings,
        features: ["CLIENT_EVENTS"],
      },
      "research-without-feature": {
        graph: researchGraph,
        description: "Research, events not enabled",
        streamableNodeNames: ["answer"],
        clientSettings: ResearchSettings,
      },
      noisy: { graph: noisyGraph(), description: "Noisy", features: ["CLIENT_EVENTS"] },
    },
    { logger: { level: "warn", stream: { write: (line: string) => void logLines.push(line) } } },
  );
  client = new OpenAI({ baseURL: server.baseURL, apiKey: "x", maxRetries: 0 });
});
after(() => server.close());

const question = [{ role: "user" as const, content: "Why is the sky blue?" }];

async function streamChunks(model: string, metadata?: Record<string, string>): Promise<Chunk[]> {
  const stream = await client.chat.completions.create({ model, messages: question, stream: true, metadata });
  const chunks: Chunk[] = [];
  for await (const chunk of stream) chunks.push(chunk as Chunk);
  return chunks;
}

const textOf = (chunks: Chunk[]) => chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("");

describe("client events on the wire", () => {
  test("with the v1 opt-in, research's events arrive in graph order between the text deltas", async () => {
    const chunks = await streamChunks("research", { graph_stream_events: "v1", graph_runtime_settings: '{"depth":3}' });
    for (const chunk of chunks) assertMatchesOpenAI("CreateChatCompletionStreamResponse", chunk);
    const sequence = chunks.map((chunk) =>
      chunk.graph_chat_serve ? `${chunk.graph_chat_serve.event.type}` : chunk.choices[0]?.delta.content ? "text" : "other",
    );
    const compact = sequence.filter((kind, index) => kind !== "text" || sequence[index - 1] !== "text");
    assert.deepEqual(compact, ["other", "status", "progress", "progress", "progress", "status", "text", "artifact", "status", "other"]);
    const events = chunks.filter((chunk) => chunk.graph_chat_serve).map((chunk) => chunk.graph_chat_serve!);
    for (const extension of events) assert.equal(extension.schema_version, 1);
    assert.deepEqual(events[0]?.event, {
      type: "status",
      namespace: ["research"],
      data: { description: "Searching 3 sources", done: false, hidden: false },
    });
    assert.deepEqual(events[3]?.event.data, { stage: "search", completed: 3, total: 3, message: "Read source 3" });
    assert.equal(events.at(-1)?.event.data.done, true, "the visible status sequence ends with done: true");
    const eventChunk = chunks.find((chunk) => chunk.graph_chat_serve)!;
    assert.deepEqual(eventChunk.choices, [{ index: 0, delta: {}, finish_reason: null, logprobs: null }]);

    const complete = await client.chat.completions.create({
      model: "research",
      messages: question,
      metadata: { graph_runtime_settings: '{"depth":3}' },
    });
    assert.equal(textOf(chunks), complete.choices[0]?.message.content);
  });

  const withoutEvents: [string, string, Record<string, string> | undefined][] = [
    ["without the opt-in", "research", undefined],
    ["with an unsupported version", "research", { graph_stream_events: "v2" }],
    ["on a graph without the feature", "research-without-feature", { graph_stream_events: "v1" }],
  ];
  for (const [name, model, metadata] of withoutEvents) {
    test(`${name}, no chunk carries the extension and the text is unchanged`, async () => {
      const chunks = await streamChunks(model, metadata);
      assert.ok(chunks.length > 3);
      for (const chunk of chunks) assert.equal("graph_chat_serve" in chunk, false);
      assert.match(textOf(chunks), /^I looked at 2 sources/);
    });
  }

  test("a complete (non-streaming) response never carries events", async () => {
    const response = await fetch(`${server.baseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "research", messages: question, metadata: { graph_stream_events: "v1" } }),
    });
    const body = await response.text();
    assert.equal(response.status, 200);
    assert.doesNotMatch(body, /graph_chat_serve/);
  });
});

describe("invalid and unrelated custom data", () => {
  test("only valid envelopes reach the wire; the run completes; one warning per run", async () => {
    logLines.length = 0;
    const chunks = await streamChunks("noisy", { graph_stream_events: "v1" });
    const events = chunks.filter((chunk) => chunk.graph_chat_serve).map((chunk) => chunk.graph_chat_serve!.event);
    assert.deepEqual(
      events.map((event) => event.data.description),
      ["Working", "Worked"],
    );
    assert.equal(textOf(chunks), "noisy answer");
    assert.equal(chunks.at(-1)?.choices[0]?.finish_reason, "stop");
    const warnings = logLines.filter((line) => line.includes("dropped an invalid client event"));
    assert.equal(warnings.length, 1, logLines.join("\n"));
    assert.match(warnings[0]!, /type must be one of/);
  });

  test("a direct graph.stream consumer still receives every custom part with its namespace", async () => {
    const parts: [string[], unknown][] = [];
    for await (const [namespace, part] of await noisyGraph().stream({ messages: [] }, { streamMode: "custom", subgraphs: true })) {
      parts.push([namespace, part]);
    }
    assert.equal(parts.length, 7);
    assert.ok(
      parts.every(([namespace]) => namespace[0]?.startsWith("inner:")),
      JSON.stringify(parts.map(([ns]) => ns)),
    );
    assert.deepEqual(parts[4]?.[1], { unrelated: "custom data for direct consumers" });
    assert.equal(parts[5]?.[1], "a plain string");
  });
});

test("clientEvent works from a tool-like helper called inside a node", async () => {
  const helper = (completed: number) => clientEvent("progress", { completed, total: 2 }, ["tool"]);
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("n", () => {
      helper(1);
      helper(2);
      return { messages: [new AIMessage("ok")] };
    })
    .addEdge(START, "n")
    .addEdge("n", END)
    .compile();
  const seen: unknown[] = [];
  for await (const part of await graph.stream({ messages: [] }, { streamMode: "custom" })) seen.push(part);
  assert.equal(seen.length, 2);
});
