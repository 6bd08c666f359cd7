import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { tool } from "@langchain/core/tools";
import { END, interrupt, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import OpenAI from "openai";
import { z } from "zod";
import { InMemoryRunCoordinator } from "../../src/coordination/in-memory-run-coordinator.js";
import { ScriptedChatModel } from "../../src/testing/scripted-chat-model.js";
import { assertMatchesOpenAI } from "../helpers/openai-schema.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

const getWeather = tool(async ({ city }) => `sunny in ${city}`, {
  name: "get_weather",
  description: "The weather in a city",
  schema: z.object({ city: z.string() }),
});
const getTime = tool(async () => "noon", { name: "get_time", description: "The time", schema: z.object({}) });
const askHuman = tool(async ({ question }) => String(interrupt({ question })), {
  name: "ask_human",
  description: "Asks the person",
  schema: z.object({ question: z.string() }),
});

/** Calls the tools one after the other (one per model turn), then answers. */
function agent(tools: { name: string; args: Record<string, unknown> }[]) {
  const model = new ScriptedChatModel({
    respond: (messages) => {
      const done = messages.filter((message) => message.getType() === "tool").length;
      const next = tools[done];
      if (next === undefined) return `Done: ${messages.at(-1)?.text}`;
      return { text: "", toolCalls: [{ id: `call_${done}`, ...next }] };
    },
  });
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state, config) => ({ messages: [await model.invoke(state.messages, config)] }))
    .addNode("tools", new ToolNode([getWeather, getTime, askHuman]))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", (state) => ((state.messages.at(-1) as { tool_calls?: unknown[] }).tool_calls?.length ? "tools" : END))
    .addEdge("tools", "agent")
    .compile();
}

const twoTools = [
  { name: "get_weather", args: { city: "Paris" } },
  { name: "get_time", args: {} },
];
/** The same agent as a node of an outer graph: its tools run in a subgraph. */
const nested = new StateGraph(MessagesAnnotation)
  .addNode("assistant", agent(twoTools))
  .addEdge(START, "assistant")
  .addEdge("assistant", END)
  .compile();

let server: TestServer;
let client: OpenAI;
before(async () => {
  server = await startTestServer(
    {
      weather: { graph: agent(twoTools), description: "Tools", features: ["CLIENT_EVENTS"], events: { tools: true } },
      nested: { graph: nested, description: "Tools in a subgraph", features: ["CLIENT_EVENTS"], events: { tools: true } },
      authored: {
        graph: agent(twoTools),
        description: "Own texts",
        features: ["CLIENT_EVENTS"],
        events: { tools: { get_weather: { start: "Checking the sky", end: "Sky checked" }, get_time: false } },
      },
      quiet: { graph: agent(twoTools), description: "No tool events", features: ["CLIENT_EVENTS"] },
      "no-feature": { graph: agent(twoTools), description: "No CLIENT_EVENTS", events: { tools: true } },
      asking: {
        graph: agent([{ name: "ask_human", args: { question: "Which city?" } }]),
        description: "Asks",
        features: ["CLIENT_EVENTS", "INTERRUPTS"],
        runCoordinator: new InMemoryRunCoordinator(),
        events: { tools: true },
      },
    },
    { profiles: { "chat-ui": { prefix: "/ui/v1" } } },
  );
  client = new OpenAI({ baseURL: server.baseURL, apiKey: "x", maxRetries: 0 });
});
after(() => server.close());

type Status = [namespace: string, description: string, done: boolean, hidden: boolean];
const OPT_IN = { graph_stream_events: "v1" };
const question = [{ role: "user" as const, content: "weather and time?" }];

function statusOf(event: { type: string; namespace: string[]; data: Record<string, unknown> }): Status {
  assert.equal(event.type, "status");
  return [event.namespace.join("/"), String(event.data.description), event.data.done === true, event.data.hidden === true];
}

async function chatStatuses(
  model: string,
  metadata: Record<string, string> | null = OPT_IN,
): Promise<{ statuses: Status[]; text: string }> {
  const stream = await client.chat.completions.create({ model, messages: question, stream: true, ...(metadata ? { metadata } : {}) });
  const statuses: Status[] = [];
  let text = "";
  for await (const chunk of stream) {
    assertMatchesOpenAI("CreateChatCompletionStreamResponse", chunk);
    const event = (chunk as { graph_chat_serve?: { event: Parameters<typeof statusOf>[0] } }).graph_chat_serve?.event;
    if (event !== undefined) statuses.push(statusOf(event));
    text += chunk.choices[0]?.delta.content ?? "";
  }
  return { statuses, text };
}

describe("automatic tool statuses", () => {
  test("chat completions: each tool's start and end, in order, then the answer", async () => {
    const { statuses, text } = await chatStatuses("weather");
    assert.deepEqual(statuses, [
      ["", "Calling get_weather", false, false],
      ["", "Called get_weather", true, false],
      ["", "Calling get_time", false, false],
      ["", "Called get_time", true, false],
    ]);
    assert.equal(text, "Done: noon");
  });

  test("tools inside a subgraph: the statuses name the subgraph's node", async () => {
    const { statuses } = await chatStatuses("nested");
    assert.deepEqual(
      statuses.map(([namespace, description, done]) => [namespace, description, done]),
      [
        ["assistant", "Calling get_weather", false],
        ["assistant", "Called get_weather", true],
        ["assistant", "Calling get_time", false],
        ["assistant", "Called get_time", true],
      ],
    );
  });

  test("the Responses API carries the same statuses", async () => {
    const stream = await client.responses.create({ model: "weather", input: "weather and time?", stream: true, metadata: OPT_IN });
    const statuses: Status[] = [];
    const commentary: string[] = [];
    for await (const event of stream) {
      // A status is a commentary message of its own, its event in the item's extension.
      if (event.type !== "response.output_item.done" || event.item.type !== "message") continue;
      const carried = (event.item as { graph_chat_serve?: { event: Parameters<typeof statusOf>[0] } }).graph_chat_serve?.event;
      if (carried !== undefined) statuses.push(statusOf(carried));
      if (event.item.phase === "commentary")
        commentary.push(event.item.content.map((part) => (part.type === "output_text" ? part.text : "")).join(""));
    }
    assert.deepEqual(commentary, ["Calling get_weather", "Called get_weather", "Calling get_time", "Called get_time"]);
    assert.deepEqual(
      statuses.map(([, description, done]) => [description, done]),
      [
        ["Calling get_weather", false],
        ["Called get_weather", true],
        ["Calling get_time", false],
        ["Called get_time", true],
      ],
    );
  });

  test("authored texts replace the defaults, and a tool set to false says nothing", async () => {
    const { statuses } = await chatStatuses("authored");
    assert.deepEqual(
      statuses.map(([, description, done]) => [description, done]),
      [
        ["Checking the sky", false],
        ["Sky checked", true],
      ],
    );
  });

  test("off unless the model asks for them, and never without CLIENT_EVENTS or the opt-in", async () => {
    assert.deepEqual((await chatStatuses("quiet")).statuses, []);
    assert.deepEqual((await chatStatuses("no-feature")).statuses, []);
    assert.deepEqual((await chatStatuses("weather", null)).statuses, []);
  });

  test("the chat-ui profile sends them by default, as the UI's event objects", async () => {
    const response = await fetch(`${server.origin}/ui/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "quiet", messages: question, stream: true }),
    });
    const events = (await response.text())
      .split("\n")
      .filter((line) => line.startsWith("data: {"))
      .map((line) => JSON.parse(line.slice(6)) as { event?: { type: string; data: { description: string; done: boolean } } })
      .flatMap((chunk) => (chunk.event === undefined ? [] : [[chunk.event.type, chunk.event.data.description, chunk.event.data.done]]));
    assert.deepEqual(events, [
      ["status", "Calling get_weather", false],
      ["status", "Called get_weather", true],
      ["status", "Calling get_time", false],
      ["status", "Called get_time", true],
    ]);
  });

  test("a tool that asks a question (an interrupt): its status is removed when the run pauses, never marked done", async () => {
    const stream = await client.chat.completions.create({ model: "asking", messages: question, stream: true, metadata: OPT_IN });
    const statuses: Status[] = [];
    let interruptCall = false;
    for await (const chunk of stream) {
      const event = (chunk as { graph_chat_serve?: { event: Parameters<typeof statusOf>[0] } }).graph_chat_serve?.event;
      if (event !== undefined) statuses.push(statusOf(event));
      if (chunk.choices[0]?.delta.tool_calls?.some((call) => call.function?.name === "graph_interrupt")) interruptCall = true;
    }
    assert.ok(interruptCall, "the run paused with a graph_interrupt call");
    assert.deepEqual(statuses, [
      ["", "Calling ask_human", false, false],
      ["", "Calling ask_human", true, true],
    ]);
  });
});
