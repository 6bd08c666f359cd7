import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import OpenAI from "openai";
import { InMemoryRunCoordinator } from "../../src/coordination/in-memory-run-coordinator.js";
import { approvingAgent, createAgentGraph } from "../fixtures/langgraph-agents/src/agents.js";
import { type RunningServer, runCli, startCli } from "../helpers/cli.js";
import { startTestServer } from "../helpers/server.js";

/** LangChain v1's `createAgent`, `createReactAgent` and a StateGraph + ToolNode, listed in a langgraph.json alone. */
const FIXTURE = fileURLToPath(new URL("../fixtures/langgraph-agents/", import.meta.url));

interface StreamedTurn {
  contentChunks: string[];
  toolStatuses: string[];
  toolCalls: { id: string; name: string; arguments: string }[];
  finishReason: string | null;
}

async function streamTurn(client: OpenAI, model: string, messages: OpenAI.Chat.ChatCompletionMessageParam[]): Promise<StreamedTurn> {
  const stream = await client.chat.completions.create({
    model,
    messages,
    stream: true,
    metadata: { graph_stream_events: "v1" },
  });
  const turn: StreamedTurn = { contentChunks: [], toolStatuses: [], toolCalls: [], finishReason: null };
  for await (const chunk of stream) {
    const event = (chunk as unknown as { graph_chat_serve?: { event?: { type: string; data: { description?: string } } } }).graph_chat_serve
      ?.event;
    if (event?.type === "status" && event.data.description !== undefined) turn.toolStatuses.push(event.data.description);
    const choice = chunk.choices[0];
    if (choice?.delta.content) turn.contentChunks.push(choice.delta.content);
    for (const call of choice?.delta.tool_calls ?? []) {
      if (call.id !== undefined) turn.toolCalls.push({ id: call.id, name: call.function?.name ?? "", arguments: "" });
      const current = turn.toolCalls.at(-1);
      if (current !== undefined) current.arguments += call.function?.arguments ?? "";
    }
    if (choice?.finish_reason) turn.finishReason = choice.finish_reason;
  }
  return turn;
}

describe("LangGraph agents served from a langgraph.json alone", () => {
  let server: RunningServer;
  let client: OpenAI;
  before(async () => {
    server = await startCli([], { cwd: FIXTURE });
    client = new OpenAI({ baseURL: server.baseURL, apiKey: "not-needed" });
  });

  test("the first line comes before the graphs load, naming the file", () => {
    assert.match(server.output(), /^chat-serve config langgraph\.json, loading its graphs…\n/u);
  });
  after(async () => {
    await server.stop();
  });

  test("`models` says each streams from its model node, not from its tools or middleware", async () => {
    const models = await runCli(["models", "--json"], { cwd: FIXTURE });
    assert.equal(models.code, 0, models.stderr);
    const rows = JSON.parse(models.stdout) as { id: string; streamableNodeNames: string[]; features: string[] }[];
    assert.deepEqual(
      rows.map((row) => [row.id, row.streamableNodeNames]),
      [
        ["create-agent", ["model_request"]],
        ["approving-agent", ["model_request"]],
        ["react-agent", ["agent"]],
        ["tool-graph", ["agent"]],
      ],
    );
    assert.deepEqual(rows[0]?.features, ["client_events", "interrupts"]);
  });

  for (const model of ["create-agent", "react-agent", "tool-graph"]) {
    test(`${model}: runs its tool and streams the answer token by token, with tool statuses`, async () => {
      const turn = await streamTurn(client, model, [{ role: "user", content: "What is the weather in Lisbon?" }]);
      assert.equal(turn.finishReason, "stop");
      assert.equal(turn.contentChunks.join(""), "The forecast says it is sunny and 21 degrees in Lisbon, a fine day to go out.");
      assert.ok(turn.contentChunks.length > 5, `streamed in ${turn.contentChunks.length} chunks`);
      assert.deepEqual(turn.toolStatuses, ["Calling get_weather", "Called get_weather"]);
    });
  }

  test("createAgent's human-in-the-loop middleware pauses as a graph_interrupt call, and its decision resumes the run", async () => {
    const question: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: "user", content: "What is the weather in Oslo?" }];
    const paused = await streamTurn(client, "approving-agent", question);
    assert.equal(paused.finishReason, "tool_calls");
    assert.equal(paused.toolCalls.length, 1);
    assert.equal(paused.toolCalls[0]?.name, "graph_interrupt");
    const request = JSON.parse(paused.toolCalls[0]!.arguments) as {
      payload: { actionRequests: { name: string; args: unknown }[] };
    };
    assert.deepEqual(request.payload.actionRequests[0]?.name, "get_weather");
    assert.deepEqual(request.payload.actionRequests[0]?.args, { city: "Oslo" });

    const resumed = await streamTurn(client, "approving-agent", [
      ...question,
      {
        role: "assistant",
        content: null,
        tool_calls: paused.toolCalls.map((call) => ({
          id: call.id,
          type: "function",
          function: { name: call.name, arguments: call.arguments },
        })),
      },
      { role: "tool", tool_call_id: paused.toolCalls[0]!.id, content: JSON.stringify({ resume: { decisions: [{ type: "approve" }] } }) },
    ]);
    assert.equal(resumed.finishReason, "stop");
    assert.equal(resumed.contentChunks.join(""), "The forecast says it is sunny and 21 degrees in Oslo, a fine day to go out.");
    assert.ok(resumed.contentChunks.length > 5);
  });
});

test("a createAgent given to the library as it is: served, its answer from its model node", async () => {
  const server = await startTestServer(
    {
      weather: { graph: createAgentGraph, description: "Weather", streamableNodeNames: ["model_request"] },
      approving: { graph: approvingAgent, description: "Weather, with approval", streamableNodeNames: "auto", features: ["INTERRUPTS"] },
    },
    {},
    { runCoordinator: new InMemoryRunCoordinator() },
  );
  try {
    const client = new OpenAI({ baseURL: server.baseURL, apiKey: "not-needed" });
    const completion = await client.chat.completions.create({
      model: "weather",
      messages: [{ role: "user", content: "Weather in Rome?" }],
    });
    assert.equal(completion.choices[0]?.message.content, "The forecast says it is sunny and 21 degrees in Rome, a fine day to go out.");
    const turn = await streamTurn(client, "approving", [{ role: "user", content: "Weather in Rome?" }]);
    assert.equal(turn.toolCalls[0]?.name, "graph_interrupt");
  } finally {
    await server.close();
  }
});
