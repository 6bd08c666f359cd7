import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { HttpAgent } from "@ag-ui/client";
import { EventSchemas } from "@ag-ui/core/schemas";
import { demoGraphs } from "../helpers/demo-graphs.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// AG-UI 1.0 (`POST /v1/ag-ui/{model}`), driven by `@ag-ui/client`'s HttpAgent as CopilotKit
// drives it; every event the server sends is checked against `@ag-ui/core` 1.0's schemas.

let server: TestServer;

before(async () => {
  server = await startTestServer(demoGraphs(), { agUi: true });
});
after(() => server.close());

/** An agent on a model, and every event of its runs, each checked against the 1.0 schemas. */
function agent(model: string) {
  const events: Record<string, any>[] = [];
  const http = new HttpAgent({ url: `${server.baseURL}/ag-ui/${model}`, threadId: `thread-${randomUUID()}` });
  http.subscribe({
    onEvent: ({ event }) => {
      const checked = EventSchemas.safeParse(event);
      assert.ok(checked.success, `${JSON.stringify(event)} is not an AG-UI 1.0 event: ${checked.error?.message}`);
      events.push(event);
    },
  });
  const say = async (text: string, parameters: Parameters<HttpAgent["runAgent"]>[0] = {}) => {
    http.messages.push({ id: randomUUID(), role: "user", content: text });
    return http.runAgent(parameters);
  };
  return { http, events, say };
}

const lastText = (http: HttpAgent) => {
  const last = http.messages.at(-1) as { role: string; content?: unknown };
  return last.role === "assistant" ? String(last.content ?? "") : "";
};

describe("AG-UI 1.0", () => {
  test("a run's lifecycle, its text, the graph's state and messages as snapshots", async () => {
    const { http, events, say } = agent("echo");
    await say("hello AG-UI");
    assert.equal(lastText(http), "hello AG-UI");
    const types = events.map((event) => event.type);
    assert.equal(types[0], "RUN_STARTED");
    assert.equal(types.at(-1), "RUN_FINISHED");
    for (const type of ["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "STATE_SNAPSHOT", "MESSAGES_SNAPSHOT"]) {
      assert.ok(types.includes(type), `${type} in ${types.join(", ")}`);
    }
    // The graph's node as a step, around its text.
    const steps = events.filter((event) => event.type.startsWith("STEP_")).map((event) => `${event.type} ${event.stepName}`);
    assert.deepEqual(steps, ["STEP_STARTED respond", "STEP_FINISHED respond"]);
    assert.ok(types.indexOf("STEP_STARTED") < types.indexOf("TEXT_MESSAGE_START"));
    assert.deepEqual((events.at(-1) as { outcome: unknown }).outcome, { type: "success" });
  });

  test("the thread remembers: a second run continues the first", async () => {
    const { http, say } = agent("memory");
    await say("my name is Ada");
    await say("what is my name?");
    assert.match(lastText(http), /Ada/u);
  });

  test("reasoning, client events as CUSTOM events, a frontend tool's call with pendingToolCallIds", async () => {
    const thinking = agent("think");
    await thinking.say("why is the sky blue?");
    const types = thinking.events.map((event) => event.type);
    for (const type of [
      "REASONING_START",
      "REASONING_MESSAGE_START",
      "REASONING_MESSAGE_CONTENT",
      "REASONING_MESSAGE_END",
      "REASONING_END",
    ]) {
      assert.ok(types.includes(type), `${type} in ${types.join(", ")}`);
    }
    const researching = agent("research");
    await researching.say("tides");
    const custom = researching.events.filter((event) => event.type === "CUSTOM").map((event) => event.name);
    assert.ok(custom.includes("status") && custom.includes("progress"), custom.join(", "));
    // The answer's citations, which AG-UI has no event for, as a CUSTOM `citations` event.
    const cited = researching.events.find((event) => event.type === "CUSTOM" && event.name === "citations") as
      | { value: { citations: { url: string; title: string; startIndex: number; endIndex: number }[] } }
      | undefined;
    assert.equal(cited?.value.citations[0]?.url, "https://example.com/sources");
    assert.ok((cited?.value.citations[0]?.endIndex ?? 0) > (cited?.value.citations[0]?.startIndex ?? 0));

    const { http, events, say } = agent("tools");
    await say("weather in Paris?");
    const start = events.find((event) => event.type === "TOOL_CALL_START") as { toolCallId: string; toolCallName: string };
    assert.equal(start.toolCallName, "get_weather");
    const finished = events.at(-1) as { outcome: { type: string; pendingToolCallIds?: string[] } };
    assert.deepEqual(finished.outcome, { type: "success", pendingToolCallIds: [start.toolCallId] });
    // The frontend runs the tool and sends its result: the graph answers from it.
    http.messages.push({ id: randomUUID(), role: "tool", toolCallId: start.toolCallId, content: JSON.stringify({ temperature: 21 }) });
    await http.runAgent();
    assert.match(lastText(http), /21/u);
  });

  test("an interrupt ends the run with the interrupt outcome; the next run's resume answers it", async () => {
    const { http, events, say } = agent("approval");
    await say("deploy the site");
    const paused = events.at(-1) as { type: string; outcome: { type: string; interrupts: { id: string; message?: string }[] } };
    assert.equal(paused.outcome.type, "interrupt");
    const [interrupt] = paused.outcome.interrupts;
    assert.match(String(interrupt!.message), /May I go ahead with: deploy the site\?/u);
    assert.equal(http.pendingInterrupts.length, 1);
    // The state a page sees carries the graph's values, not LangGraph's own `__interrupt__`.
    const state = events.findLast((event) => event.type === "STATE_SNAPSHOT") as { snapshot: Record<string, unknown> } | undefined;
    assert.ok(state !== undefined && !Object.keys(state.snapshot).some((key) => key.startsWith("__")), JSON.stringify(state));
    await http.runAgent({ resume: [{ interruptId: interrupt!.id, status: "resolved", payload: "approve" }] });
    assert.match(lastText(http), /^Approved: going ahead with deploy the site/u);
    assert.deepEqual((events.at(-1) as { outcome: unknown }).outcome, { type: "success" });
  });
});

describe("AG-UI 1.0: bad input", () => {
  const post = (model: string, body: unknown) =>
    fetch(`${server.baseURL}/ag-ui/${model}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const input = { threadId: "t", runId: "r", messages: [{ id: "m", role: "user", content: "hi" }] };

  test("each mistake is a JSON error before any event, naming the field", async () => {
    const unknown = await post("nobody", input);
    assert.equal(unknown.status, 404);
    assert.equal(((await unknown.json()) as { error: { code: string } }).error.code, "model_not_found");
    const noThread = await post("echo", { runId: "r", messages: [] });
    assert.equal(noThread.status, 400);
    assert.equal(((await noThread.json()) as { error: { param: string } }).error.param, "threadId");
    const badResume = await post("approval", { ...input, resume: [{ interruptId: "nope", status: "resolved", payload: 1 }] });
    assert.equal(badResume.status, 400);
    assert.equal(((await badResume.json()) as { error: { param: string } }).error.param, "resume.0.interruptId");
  });

  test("a client that aborts cancels the run", async () => {
    const { http, say } = agent("research");
    const running = say("a long one").catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 100));
    http.abortRun();
    await running;
    const deadline = Date.now() + 5_000;
    while (server.serve.activeRuns > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(server.serve.activeRuns, 0, "no run is left in flight");
  });
});
