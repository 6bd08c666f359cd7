import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { HumanMessage } from "@langchain/core/messages";
import { Command, END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { RemoteGraph } from "@langchain/langgraph/remote";
import { Client } from "@langchain/langgraph-sdk";
import { graph as approval } from "../../demo/graphs/approval.js";
import { graph as echo } from "../../demo/graphs/echo.js";
import { graph as memory } from "../../demo/graphs/memory.js";
import { InMemoryRunCoordinator } from "../../src/coordination/in-memory-run-coordinator.js";
import { GraphFeature } from "../../src/registry/features.js";
import { ScriptedChatModel } from "../../src/testing/scripted-chat-model.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// The LangGraph Agent Protocol driven by LangGraph's own clients: the SDK's `Client` and
// `RemoteGraph`, unchanged, against the surface at the server root.

// Half a second of work before it answers, stopped by its run's signal.
const slowModel = new ScriptedChatModel({ respond: () => "one two three four five six seven eight nine ten" });
const slow = new StateGraph(MessagesAnnotation)
  .addNode("respond", async (state, config) => {
    await sleep(500, undefined, { signal: config.signal });
    return { messages: [await slowModel.invoke(state.messages, config)] };
  })
  .addEdge(START, "respond")
  .addEdge("respond", END)
  .compile();

const user = (content: string) => ({ messages: [{ role: "user", content }] });
const lastText = (values: unknown) => {
  const messages = (values as { messages: { content: string }[] }).messages;
  return messages.at(-1)?.content;
};

/** The HTTP status and body of a request the SDK refused. */
async function refusal(call: Promise<unknown>): Promise<{ status: number; body: unknown }> {
  try {
    await call;
  } catch (error) {
    const { status, message } = error as { status?: number; message: string };
    const body = JSON.parse(message.replace(/^HTTP \d+: /u, ""));
    return { status: status ?? Number(/^HTTP (\d+)/u.exec(message)?.[1]), body };
  }
  assert.fail("the request succeeded");
}

let server: TestServer;
let client: Client;

before(async () => {
  server = await startTestServer(
    {
      echo: { graph: echo, description: "Echo", streamableNodeNames: ["respond"] },
      memory: { graph: memory, description: "Remembers", threads: true },
      approval: {
        graph: approval,
        description: "Asks first",
        features: [GraphFeature.INTERRUPTS],
        runCoordinator: new InMemoryRunCoordinator(),
      },
      slow: { graph: slow, description: "Takes its time" },
    },
    { langgraph: true },
  );
  client = new Client({ apiUrl: server.origin });
});
after(() => server.close());

describe("assistants", () => {
  test("one system assistant per model; the model id is accepted as its id", async () => {
    const assistants = await client.assistants.search({ limit: 100 });
    assert.deepEqual(assistants.map((assistant) => assistant.graph_id).sort(), ["approval", "echo", "memory", "slow"]);
    assert.equal(await client.assistants.count(), 4);
    const echoAssistant = assistants.find((assistant) => assistant.graph_id === "echo")!;
    // The id `langgraph dev` gives the graph's assistant (uuid5 of the graph id).
    assert.equal(echoAssistant.assistant_id, "046b5dc7-2108-582c-9c6c-31d556d138f0");
    assert.deepEqual(await client.assistants.get("echo"), echoAssistant);
    assert.deepEqual(
      (await client.assistants.search({ graphId: "memory" })).map((assistant) => assistant.graph_id),
      ["memory"],
    );
    const graph = (await client.assistants.getGraph("echo")) as { nodes: { id: string }[] };
    assert.ok(graph.nodes.some((node) => node.id === "respond"));
    const schemas = await client.assistants.getSchemas("echo");
    assert.equal(schemas.graph_id, "echo");
    assert.ok(Object.hasOwn((schemas.state_schema as { properties: object }).properties, "messages"));
    assert.deepEqual(await client.assistants.getSubgraphs("echo"), {});
    const missing = await refusal(client.assistants.get("nobody"));
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.body, { detail: "No assistant with id 'nobody' was found." });
  });
});

describe("runs", () => {
  test("a streamed run: metadata, then tokens as messages-tuple that add up to the answer, then values", async () => {
    const thread = await client.threads.create();
    const events: { event: string; data: unknown }[] = [];
    for await (const part of client.runs.stream(thread.thread_id, "echo", {
      input: user("stream these words"),
      streamMode: ["messages-tuple", "values"],
    })) {
      events.push(part);
    }
    assert.equal(events[0]?.event, "metadata");
    const tokens = events.filter((part) => part.event === "messages").map((part) => (part.data as [{ content: string; type: string }])[0]);
    assert.ok(tokens.length >= 3, "one event per token");
    assert.equal(tokens.map((token) => token.content).join(""), "stream these words");
    assert.equal(tokens[0]?.type, "ai");
    const last = events.filter((part) => part.event === "values").at(-1);
    assert.equal(lastText(last?.data), "stream these words");
    assert.equal((await client.threads.get(thread.thread_id)).status, "idle");
  });

  test("a second turn on a thread remembers the first; wait answers with the thread's values", async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "memory", { input: user("apples") });
    const values = await client.runs.wait(thread.thread_id, "memory", { input: user("pears") });
    assert.match(String(lastText(values)), /You said "pears"\. Before that you said: "apples"/u);
    const state = await client.threads.getState(thread.thread_id);
    assert.equal((state.values as { messages: unknown[] }).messages.length, 4);
    assert.equal(state.checkpoint.thread_id, thread.thread_id);
    const history = await client.threads.getHistory(thread.thread_id, { limit: 100 });
    assert.ok(history.length >= 6, "each step of each run is a checkpoint");
    const first = history.at(-1)!;
    const atFirst = await client.threads.getState(thread.thread_id, first.checkpoint.checkpoint_id!);
    assert.deepEqual(atFirst.checkpoint, first.checkpoint);
  });

  test("the other stream modes: updates, the legacy messages events, debug, tasks, checkpoints, events", async () => {
    const modes = ["updates", "messages", "debug", "tasks", "checkpoints", "events"] as const;
    const seen = new Set<string>();
    for await (const part of client.runs.stream(null, "echo", { input: user("all modes"), streamMode: [...modes] })) seen.add(part.event);
    for (const event of [
      "updates",
      "messages/metadata",
      "messages/partial",
      "messages/complete",
      "debug",
      "tasks",
      "checkpoints",
      "events",
    ]) {
      assert.ok(seen.has(event), `${event} streamed (saw ${[...seen].join(", ")})`);
    }
  });

  test("a background run: created, joined, listed, read; its stream replayed from Last-Event-ID", async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "slow", { input: user("go"), streamResumable: true, streamMode: ["values"] });
    assert.equal(run.thread_id, thread.thread_id);
    assert.ok(["pending", "running"].includes(run.status));
    const joined: string[] = [];
    for await (const part of client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: "-1" })) joined.push(part.event);
    assert.deepEqual([joined[0], joined.at(-1)], ["metadata", "values"]);
    const values = await client.runs.join(thread.thread_id, run.run_id);
    assert.match(String(lastText(values)), /^one two .* ten$/u);
    assert.equal((await client.runs.get(thread.thread_id, run.run_id)).status, "success");
    assert.deepEqual(
      (await client.runs.list(thread.thread_id)).map((listed) => listed.run_id),
      [run.run_id],
    );
    await client.runs.delete(thread.thread_id, run.run_id);
    assert.equal((await refusal(client.runs.get(thread.thread_id, run.run_id))).status, 404);
  });

  test("one run at a time on a thread: reject is a 409, enqueue waits its turn, interrupt cancels the one running", async () => {
    const thread = await client.threads.create();
    const first = await client.runs.create(thread.thread_id, "slow", { input: user("first") });
    const rejected = await refusal(client.runs.create(thread.thread_id, "slow", { input: user("second") }));
    assert.equal(rejected.status, 409);
    assert.match(String((rejected.body as { detail: string }).detail), /already running/u);
    assert.equal((await client.threads.get(thread.thread_id)).status, "busy");
    const queued = await client.runs.create(thread.thread_id, "slow", { input: user("queued"), multitaskStrategy: "enqueue" });
    const interrupting = await client.runs.create(thread.thread_id, "echo", { input: user("now"), multitaskStrategy: "interrupt" });
    assert.equal(lastText(await client.runs.join(thread.thread_id, interrupting.run_id)), "now");
    const statuses = await Promise.all([first, queued].map((run) => client.runs.get(thread.thread_id, run.run_id)));
    assert.deepEqual(
      statuses.map((run) => run.status),
      ["interrupted", "interrupted"],
    );
    assert.equal((await client.threads.get(thread.thread_id)).status, "idle");
  });

  test("20 concurrent runs with reject on one thread: exactly one runs, the rest are 409s", async () => {
    const thread = await client.threads.create();
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_unused, index) => client.runs.create(thread.thread_id, "slow", { input: user(`run ${index}`) })),
    );
    assert.equal(results.filter((result) => result.status === "fulfilled").length, 1);
    for (const result of results) if (result.status === "rejected") assert.match(String(result.reason), /409/u);
    assert.equal((await client.runs.list(thread.thread_id)).length, 1);
  });

  test("cancel: the run stops, its status says so, and the thread takes a new run", async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "slow", { input: user("long") });
    await client.runs.cancel(thread.thread_id, run.run_id, true);
    assert.equal((await client.runs.get(thread.thread_id, run.run_id)).status, "interrupted");
    const next = await client.runs.wait(thread.thread_id, "echo", { input: user("after") });
    assert.equal(lastText(next), "after");
  });

  test("interrupts are native: __interrupt__ in the stream, an interrupted thread, Command({ resume }) answers it", async () => {
    const thread = await client.threads.create();
    const updates: unknown[] = [];
    for await (const part of client.runs.stream(thread.thread_id, "approval", { input: user("deploy"), streamMode: ["updates"] })) {
      if (part.event === "updates") updates.push(part.data);
    }
    const paused = updates.find((update) => Object.hasOwn(update as object, "__interrupt__")) as {
      __interrupt__: { value: { question: string } }[];
    };
    assert.equal(paused.__interrupt__[0]?.value.question, "May I go ahead with: deploy?");
    const interrupted = await client.threads.get(thread.thread_id);
    assert.equal(interrupted.status, "interrupted");
    assert.equal(Object.values(interrupted.interrupts).flat().length, 1);
    const resumed = await client.runs.wait(thread.thread_id, "approval", { command: { resume: "approve" } });
    assert.equal(lastText(resumed), "Approved: going ahead with deploy.");
    const notWaiting = await refusal(client.runs.wait(thread.thread_id, "approval", { command: { resume: "approve" } }));
    assert.equal(notWaiting.status, 409);
  });

  test("RemoteGraph: invoke and stream, and an interrupt resumed with a Command", async () => {
    const remote = new RemoteGraph({ graphId: "echo", url: server.origin });
    const answer = await remote.invoke({ messages: [new HumanMessage("remote hello")] });
    assert.equal(lastText(answer), "remote hello");
    const chunks: unknown[] = [];
    for await (const chunk of await remote.stream({ messages: [new HumanMessage("remote stream")] }, { streamMode: "values" }))
      chunks.push(chunk);
    assert.equal(lastText(chunks.at(-1)), "remote stream");
    const thread = await client.threads.create();
    const config = { configurable: { thread_id: thread.thread_id } };
    const asking = new RemoteGraph({ graphId: "approval", url: server.origin });
    // RemoteGraph raises a paused run's interrupt, as it does for any remote graph.
    await assert.rejects(asking.invoke({ messages: [new HumanMessage("ship it")] }, config), { name: "GraphInterrupt" });
    assert.equal((await asking.getState(config)).next.length, 1);
    const done = await asking.invoke(new Command({ resume: "yes" }), config);
    assert.equal(lastText(done), "Approved: going ahead with ship it.");
  });
});
