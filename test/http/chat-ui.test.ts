import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { AIMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import type { FastifyInstance } from "fastify";
import { graph as approvalGraph } from "../../demo/graphs/approval.js";
import { ChatServe } from "../../src/app/chat-serve.js";
import { InMemoryRunCoordinator } from "../../src/coordination/in-memory-run-coordinator.js";
import { GraphRegistry } from "../../src/registry/graph-registry.js";
import { checkpointKey } from "../../src/runs/interrupts/checkpoint-key.js";
import { echoGraph, researchEntry } from "../fixtures/graphs.js";
import { parallelGraph } from "../fixtures/interrupt-graphs.js";
import { assertMatchesOpenAI } from "../helpers/openai-schema.js";

// Drives the chat-ui profile the way Open WebUI does: a body without `metadata`, its headers,
// the stream read line by line (lines that are not `data:` skipped, payloads that do not parse
// skipped), a chunk's `event` handed to its event emitter, nested `url_citation` annotations
// kept as sources, and the assistant text kept in history `.strip()`ped.

const UI_KEY = "sk-open-webui-0123456789";
let app: FastifyInstance;
let origin: string;
let approvalRuns = 0;
const coordinator = new InMemoryRunCoordinator();

/** Reads back the conversation ID a run got for tracing. */
function sessionGraph() {
  return new StateGraph(MessagesAnnotation)
    .addNode("respond", (_state, config: RunnableConfig) => ({
      messages: [new AIMessage(`session ${String(config.metadata?.tracing_session_id ?? "none")}`)],
    }))
    .addEdge(START, "respond")
    .addEdge("respond", END)
    .compile();
}

before(async () => {
  const registry = new GraphRegistry(
    {
      echo: { graph: echoGraph(), description: "Echo", streamableNodeNames: ["respond"] },
      approval: {
        graph: approvalGraph,
        description: "Approval",
        features: ["INTERRUPTS"],
        requestToInput: (_request, messages) => {
          approvalRuns += 1;
          return { messages };
        },
      },
      parallel: { graph: parallelGraph(), description: "Two questions at once", features: ["INTERRUPTS"] },
      research: researchEntry(),
      "research-deep": { ...researchEntry(), description: "Research, deep", presetSettings: { depth: 5 } },
      // Traced (a callbacks list), so the run's config carries the session.
      session: { graph: sessionGraph(), description: "Session", runtimeCallbacks: [] },
    },
    { runCoordinator: coordinator, checkpointer: new MemorySaver() },
  );
  const serve = new ChatServe({
    graphs: registry,
    auth: {
      keys: [
        { tenant: "ui", key: UI_KEY, profile: "chat-ui" },
        { tenant: "ui", key: "sk-strict-0123456789abc" },
      ],
    },
  });
  app = await serve.bind({ prefix: "/v1", profiles: { "chat-ui": { prefix: "/ui/v1" } } });
  origin = await app.listen({ host: "127.0.0.1", port: 0 });
});
after(() => app.close());

type Message = { role: "user" | "assistant" | "system" | "tool"; content: string | null; tool_calls?: unknown[]; tool_call_id?: string };

interface UiTurn {
  status: number;
  /** The assistant text as Open WebUI keeps it in history. */
  text: string;
  events: { type: string; data: Record<string, unknown> }[];
  sources: { url: string; title?: string }[];
  toolCalls: unknown[];
  finishReason: string | null;
  chunks: unknown[];
}

/** One chat turn as Open WebUI sends and reads it. */
async function openWebUi(
  model: string,
  messages: Message[],
  options: { headers?: Record<string, string>; body?: Record<string, unknown>; path?: string; key?: string } = {},
): Promise<UiTurn> {
  const response = await fetch(`${origin}${options.path ?? "/ui/v1"}/chat/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${options.key ?? "sk-strict-0123456789abc"}`,
      ...options.headers,
    },
    body: JSON.stringify({ model, messages, stream: true, stream_options: { include_usage: true }, ...options.body }),
  });
  const turn: UiTurn = { status: response.status, text: "", events: [], sources: [], toolCalls: [], finishReason: null, chunks: [] };
  const body = await response.text();
  // An error, or a complete (non-streamed) answer: the body as it is.
  if (response.status !== 200 || !(response.headers.get("content-type") ?? "").startsWith("text/event-stream"))
    return { ...turn, text: body };
  for (const line of body.split("\n")) {
    if (!line.startsWith("data:")) continue;
    const payload = line.slice(5).trim();
    if (payload === "[DONE]") break;
    let chunk: Record<string, any>;
    try {
      chunk = JSON.parse(payload);
    } catch {
      continue;
    }
    turn.chunks.push(chunk);
    if (chunk.event) turn.events.push(chunk.event);
    const choice = chunk.choices?.[0];
    if (choice?.delta?.content) turn.text += choice.delta.content;
    if (choice?.delta?.tool_calls) turn.toolCalls.push(...choice.delta.tool_calls);
    for (const annotation of choice?.delta?.annotations ?? []) {
      if (annotation.type === "url_citation" && annotation.url_citation) turn.sources.push(annotation.url_citation);
    }
    if (choice?.finish_reason) turn.finishReason = choice.finish_reason;
  }
  return { ...turn, text: turn.text.trim() };
}

describe("the chat-ui profile", () => {
  test("an interrupt is a readable question with a marker, and the person's reply resumes the run once", async () => {
    const history: Message[] = [{ role: "user", content: "ship the release" }];
    const before = approvalRuns;
    const paused = await openWebUi("approval", history);
    assert.equal(paused.status, 200);
    assert.deepEqual(paused.toolCalls, [], "no tool call for the UI to auto-answer");
    assert.equal(paused.finishReason, "stop");
    assert.match(
      paused.text,
      /^May I go ahead with: ship the release\? \(approve \/ reject\)\n\n`graph_interrupt:[0-9a-f-]{36}:[0-9a-f]{32}`$/u,
    );
    for (const chunk of paused.chunks) assertMatchesOpenAI("CreateChatCompletionStreamResponse", chunk);

    history.push({ role: "assistant", content: paused.text }, { role: "user", content: "approve" });
    const resumed = await openWebUi("approval", history);
    assert.equal(resumed.text, "Approved: going ahead with ship the release.");
    assert.equal(approvalRuns, before + 1, "the resume ran the paused run, not a new one");

    // The UI re-sends the same history (a regenerate): the run is finished, and says so in words.
    const again = await openWebUi("approval", history);
    assert.equal(again.status, 200);
    assert.match(again.text, /^⚠️ This run has no pending interrupts/u);
    assert.equal(approvalRuns, before + 1);
  });

  test("a reply to a run another request is resuming right now is a 409 run_busy", async () => {
    const history: Message[] = [{ role: "user", content: "ship it" }];
    const paused = await openWebUi("approval", history);
    const runId = /graph_interrupt:([0-9a-f-]{36}):/u.exec(paused.text)![1]!;
    const lease = await coordinator.tryAcquire(checkpointKey("ui", "approval", runId));
    try {
      const busy = await openWebUi("approval", [
        ...history,
        { role: "assistant", content: paused.text },
        { role: "user", content: "approve" },
      ]);
      assert.equal(busy.status, 409);
      assert.equal(JSON.parse(busy.text).error.code, "run_busy");
    } finally {
      await lease!.release();
    }
  });

  test("a batch of several questions is numbered and answered with numbered lines", async () => {
    const history: Message[] = [{ role: "user", content: "go" }];
    const paused = await openWebUi("parallel", history);
    assert.match(
      paused.text,
      /^1\. ```json\n[\s\S]*\n2\. ```json\n[\s\S]*Answer each on its own line, numbered like the questions\.\n\n`graph_interrupt:/u,
    );
    const leftFirst = paused.text.indexOf('"left"') < paused.text.indexOf('"right"');
    history.push({ role: "assistant", content: paused.text });
    const partial = await openWebUi("parallel", [...history, { role: "user", content: "1: only one" }]);
    assert.match(partial.text, /^⚠️ There are 2 questions: answer each on its own line, numbered 1 to 2\./u);
    const done = await openWebUi("parallel", [...history, { role: "user", content: "1: first\n2) second" }]);
    assert.equal(done.text, leftFirst ? 'left="first" & right="second"' : 'left="second" & right="first"');
  });

  test("an auto-answer (a graph_interrupt tool call with an empty tool result) never resumes the run", async () => {
    const history: Message[] = [{ role: "user", content: "delete everything" }];
    const paused = await openWebUi("approval", history);
    const [, runId, stateToken] = /graph_interrupt:([0-9a-f-]{36}):([0-9a-f]{32})/u.exec(paused.text)!;
    const autoAnswered: Message[] = [
      ...history,
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "call_x",
            type: "function",
            function: { name: "graph_interrupt", arguments: JSON.stringify({ run_id: runId, state_token: stateToken, payload: {} }) },
          },
        ],
      },
      { role: "tool", tool_call_id: "call_x", content: "" },
    ];
    const refused = await openWebUi("approval", autoAnswered);
    assert.equal(refused.status, 200);
    assert.match(refused.text, /^⚠️ In this chat, a question from the graph is answered by writing the answer as your next message/u);
    // The run still waits for the person.
    history.push({ role: "assistant", content: paused.text }, { role: "user", content: "reject" });
    assert.match((await openWebUi("approval", history)).text, /^Not approved/u);
  });

  test("research: status and progress as the UI's event objects, citations as nested url_citation sources", async () => {
    const turn = await openWebUi("research", [{ role: "user", content: "What is LangGraph?" }]);
    assert.deepEqual(
      turn.events.map((event) => [event.type, event.data.description, event.data.done]),
      [
        ["status", "Searching 2 sources", false],
        ["status", "Read source 1 (1/2)", false],
        ["status", "Read source 2 (2/2)", false],
        ["status", "Writing the answer", false],
        ["status", "Notes on What is LangGraph: https://example.com/notes/1", false],
        ["status", "Research complete", true],
      ],
    );
    assert.deepEqual(
      turn.sources.map((source) => source.url),
      ["https://example.com/sources"],
    );
    assert.match(turn.text, /^I looked at 2 sources/u);
    for (const chunk of turn.chunks) assertMatchesOpenAI("CreateChatCompletionStreamResponse", chunk);
  });

  test("settings without metadata: a preset model, the graph_runtime_settings body field, or its header", async () => {
    assert.match((await openWebUi("research-deep", [{ role: "user", content: "x" }])).text, /^I looked at 5 sources/u);
    const field = await openWebUi("research", [{ role: "user", content: "x" }], { body: { graph_runtime_settings: { depth: 1 } } });
    assert.match(field.text, /^I looked at 1 source /u);
    const header = await openWebUi("research", [{ role: "user", content: "x" }], {
      headers: { "x-graph-runtime-settings": '{"depth":3}' },
    });
    assert.match(header.text, /^I looked at 3 sources/u);
    const bad = await openWebUi("research", [{ role: "user", content: "x" }], { body: { graph_runtime_settings: { depth: 9 } } });
    assert.equal(bad.status, 400);
    assert.equal(JSON.parse(bad.text).error.code, "invalid_client_settings");
    // Fields a UI adds that the API does not know are dropped, not refused.
    assert.equal((await openWebUi("echo", [{ role: "user", content: "hi" }], { body: { chat_id: "abc", features: {} } })).text, "hi");
  });

  test("Open WebUI's chat ID is the conversation for tracing", async () => {
    const turn = await openWebUi("session", [{ role: "user", content: "x" }], { headers: { "X-OpenWebUI-Chat-Id": "chat-42" } });
    assert.equal(turn.text, "session chat-42");
  });

  test("a UI's task prompt is answered at once, without running the graph", async () => {
    const before = approvalRuns;
    const prompt =
      '### Task:\nGenerate a concise, 3-5 word title summarizing the chat history.\n### Output:\nJSON format: { "title": "your concise title here" }\n### Chat History:\n<chat_history>\nUSER: Please ship the release today\nASSISTANT: May I go ahead?\n</chat_history>';
    const turn = await openWebUi("approval", [{ role: "user", content: prompt }], { body: { stream: false } });
    assert.equal(turn.status, 200);
    const completion = JSON.parse(turn.text);
    assert.deepEqual(JSON.parse(completion.choices[0].message.content), { title: "Please ship the release today" });
    assert.equal(approvalRuns, before, "the graph did not run");
  });

  test("the strict profile's wire is unchanged; a key with profile chat-ui gets the chat-ui wire on /v1", async () => {
    const strict = await openWebUi("approval", [{ role: "user", content: "x" }], { path: "/v1" });
    assert.equal(strict.finishReason, "tool_calls");
    assert.equal(strict.toolCalls.length, 1);
    const byKey = await openWebUi("approval", [{ role: "user", content: "x" }], { path: "/v1", key: UI_KEY });
    assert.equal(byKey.finishReason, "stop");
    assert.match(byKey.text, /graph_interrupt:/u);
    // Research on the strict wire keeps its extension and needs the opt-in.
    const research = await openWebUi("research", [{ role: "user", content: "x" }], { path: "/v1" });
    assert.deepEqual(research.events, []);
  });
});
