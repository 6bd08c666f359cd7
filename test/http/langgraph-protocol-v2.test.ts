import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { AIMessage } from "@langchain/core/messages";
import { v7 as uuid7 } from "@langchain/core/utils/uuid";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { Client } from "@langchain/langgraph-sdk";
import { graph as approval } from "../../demo/graphs/approval.js";
import { graph as echo } from "../../demo/graphs/echo.js";
import { graph as memory } from "../../demo/graphs/memory.js";
import { InMemoryRunCoordinator } from "../../src/coordination/in-memory-run-coordinator.js";
import { GraphFeature } from "../../src/registry/features.js";
import { eventually } from "../helpers/eventually.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// Protocol v2 (the thread-centric streaming of `@langchain/react` and the SDK's
// `client.threads.stream`), driven by the SDK's own ThreadStream over HTTP commands and SSE.

const user = (content: string) => ({ messages: [{ role: "user", content }] });
const textOf = (message: unknown) => {
  const content = (message as { content: unknown }).content;
  return typeof content === "string" ? content : (content as { text?: string }[]).map((block) => block.text ?? "").join("");
};

let server: TestServer;
let client: Client;

/** A parent whose one node is a subgraph of two steps: the subgraph keeps its own checkpoints. */
const inner = new StateGraph(MessagesAnnotation)
  .addNode("draft", () => ({ messages: [new AIMessage("drafted")] }))
  .addNode("polish", () => ({ messages: [new AIMessage("polished")] }))
  .addEdge(START, "draft")
  .addEdge("draft", "polish")
  .addEdge("polish", END)
  .compile();
/** Echoes the last message after 400 ms: a run that is still running when a client injects. */
const slow = new StateGraph(MessagesAnnotation)
  .addNode("answer", async (state) => {
    await new Promise((resolve) => setTimeout(resolve, 400));
    return { messages: [new AIMessage(`heard: ${textOf(state.messages.at(-1))}`)] };
  })
  .addEdge(START, "answer")
  .addEdge("answer", END)
  .compile();
const nested = new StateGraph(MessagesAnnotation).addNode("writer", inner).addEdge(START, "writer").addEdge("writer", END).compile();

before(async () => {
  server = await startTestServer(
    {
      echo: { graph: echo, description: "Echo", streamableNodeNames: ["respond"] },
      memory: { graph: memory, description: "Remembers", threads: true },
      nested: { graph: nested, description: "A graph with a subgraph" },
      slow: { graph: slow, description: "Answers after a while" },
      approval: {
        graph: approval,
        description: "Asks first",
        features: [GraphFeature.INTERRUPTS],
        runCoordinator: new InMemoryRunCoordinator(),
      },
    },
    { langgraph: true },
  );
  client = new Client({ apiUrl: server.origin });
});
after(() => server.close());

/** A command sent as the SDK sends it; the status and the body. */
async function command(threadId: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${server.origin}/threads/${threadId}/commands`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** The thread's events from `since` on, read until the root lifecycle reports `until`. */
async function events(
  threadId: string,
  filter: Record<string, unknown>,
  until: string,
): Promise<{ id: string; event: string; data: any }[]> {
  const controller = new AbortController();
  const response = await fetch(`${server.origin}/threads/${threadId}/stream/events`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify(filter),
    signal: controller.signal,
  });
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type") ?? "", /text\/event-stream/u);
  const seen: { id: string; event: string; data: any }[] = [];
  const decoder = new TextDecoder();
  let text = "";
  let done = false;
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  while (!done) {
    const { value: chunk, done: ended } = await reader.read();
    if (ended) break;
    text += decoder.decode(chunk, { stream: true });
    let end = text.indexOf("\n\n");
    while (end !== -1) {
      const frame = text.slice(0, end);
      text = text.slice(end + 2);
      end = text.indexOf("\n\n");
      if (frame.startsWith(":")) continue;
      const field = (name: string) =>
        frame
          .split("\n")
          .find((line) => line.startsWith(`${name}: `))
          ?.slice(name.length + 2) ?? "";
      const event = { id: field("id"), event: field("event"), data: JSON.parse(field("data")) };
      seen.push(event);
      if (event.event === "lifecycle" && event.data.params.namespace.length === 0 && event.data.params.data.event === until) done = true;
    }
  }
  await reader.cancel();
  controller.abort();
  return seen;
}

describe("protocol v2 over HTTP and SSE", () => {
  test("a run started on a new thread streams its values and messages; the thread's state and agent tree follow", async () => {
    const thread = client.threads.stream({ assistantId: "echo" });
    const values = thread.values;
    const started = (await thread.run.start({ input: user("hello protocol two") })) as { run_id?: string };
    assert.match(String(started.run_id), /^[0-9a-f-]{36}$/u);
    const output = (await values) as { messages: unknown[] };
    assert.equal(textOf(output.messages.at(-1)), "hello protocol two");
    assert.equal(thread.interrupted, false);
    const state = (await thread.state.get({ namespace: [] })) as { values: { messages: unknown[] }; checkpoint: { id: string } };
    assert.equal(state.values.messages.length, 2);
    assert.match(state.checkpoint.id, /^[0-9a-f-]{36}$/u);
    const { tree } = (await thread.agent.getTree({})) as {
      tree: { status: string; graph_name: string; children?: { graph_name: string }[] };
    };
    assert.equal(tree.status, "completed");
    assert.equal(tree.graph_name, "echo");
    assert.deepEqual(
      tree.children?.map((child) => child.graph_name),
      ["respond"],
    );
    // The same thread's events, replayed to a second client: in order, numbered, filtered by channel.
    const replay = await events(thread.threadId, { channels: ["lifecycle", "messages", "values"] }, "completed");
    assert.deepEqual(
      replay.map((event) => Number(event.id)),
      replay.map((event) => event.data.seq),
    );
    assert.ok(replay.every((event, index) => index === 0 || Number(event.id) > Number(replay[index - 1]!.id)));
    assert.ok(replay.every((event) => ["lifecycle", "messages", "values"].includes(event.event)));
    assert.deepEqual(replay[0]!.data.params, {
      namespace: [],
      timestamp: replay[0]!.data.params.timestamp,
      data: { event: "running", graph_name: "echo" },
    });
    const deltas = replay.filter((event) => event.event === "messages" && event.data.params.data.event === "content-block-delta");
    assert.equal(deltas.map((event) => event.data.params.data.delta.text).join(""), "hello protocol two");
    // `since` skips what a client has seen.
    const last = Number(replay.at(-1)!.id);
    const later = await events(thread.threadId, { channels: ["lifecycle"], since: last - 1 }, "completed");
    assert.deepEqual(
      later.map((event) => Number(event.id)),
      [last],
    );
    await thread.close();
  });

  test("a second run on the thread remembers the first", async () => {
    const thread = client.threads.stream({ assistantId: "memory" });
    const values = thread.values;
    await thread.run.start({ input: user("my name is Ada") });
    await values;
    await thread.run.start({ input: user("what is my name?") });
    // `thread.values` resolved with the first run and stays resolved: the second run may still be
    // answering when `start` returns, so its state is read once it holds the answer.
    let messages: unknown[] = [];
    await eventually(async () => {
      messages = ((await thread.state.get({ namespace: [] })) as { values: { messages: unknown[] } }).values.messages;
      assert.equal(messages.length, 4);
    }, 5_000);
    assert.match(textOf(messages.at(-1)), /Ada/u);
    await thread.close();
  });

  test("an interrupt is announced on the input channel and answered with input.respond", async () => {
    const thread = client.threads.stream({ assistantId: "approval" });
    const values = thread.values;
    await thread.run.start({ input: user("deploy the site") });
    await values;
    assert.equal(thread.interrupted, true);
    const [asked] = thread.interrupts as { interruptId: string; payload: { question: string } }[];
    assert.match(asked!.payload.question, /deploy the site/u);
    const interrupted = await events(thread.threadId, { channels: ["lifecycle", "input"] }, "interrupted");
    assert.equal(interrupted.find((event) => event.event === "input.requested")?.data.params.data.interrupt_id, asked!.interruptId);
    await thread.input.respond({ namespace: [], interrupt_id: asked!.interruptId, response: "approve" });
    const after = await events(thread.threadId, { channels: ["lifecycle"], since: Number(interrupted.at(-1)!.id) }, "completed");
    assert.equal(after.at(-1)!.data.params.data.event, "completed");
    const state = (await thread.state.get({ namespace: [] })) as { values: { messages: unknown[] } };
    assert.match(textOf(state.values.messages.at(-1)), /^Approved: going ahead with deploy the site/u);
    // Nothing waits any more: a second answer is refused in the protocol's own terms.
    const again = await command(thread.threadId, {
      id: 9,
      method: "input.respond",
      params: { interrupt_id: asked!.interruptId, response: "approve" },
    });
    assert.equal(again.status, 200);
    assert.equal(again.body.type, "error");
    assert.equal(again.body.error, "no_such_run");
    await thread.close();
  });
});

describe("protocol v2: time travel, injected input, answered interrupts, subgraphs", () => {
  test("state.listCheckpoints and state.fork: a run from an earlier checkpoint branches the thread", async () => {
    const thread = client.threads.stream({ assistantId: "memory" });
    const first = thread.values;
    await thread.run.start({ input: user("my name is Ada") });
    await first;
    await thread.run.start({ input: user("my name is Bob") });
    await eventually(async () => {
      const state = (await thread.state.get({ namespace: [] })) as { values: { messages: unknown[] } };
      assert.equal(state.values.messages.length, 4);
    }, 5_000);
    const { checkpoints } = (await thread.state.listCheckpoints({ limit: 20 })) as {
      checkpoints: { id: string; step: number; timestamp: string }[];
    };
    assert.ok(checkpoints.length >= 4);
    assert.ok(
      checkpoints.every((checkpoint, index) => index === 0 || checkpoint.step <= checkpoints[index - 1]!.step),
      "newest first",
    );
    // The checkpoint at the end of the first run: the state that holds one answer.
    const history = await client.threads.getHistory(thread.threadId, { limit: 20 });
    const afterFirst = history.find((state) => (state.values as { messages: unknown[] }).messages.length === 2 && state.next.length === 0)!
      .checkpoint.checkpoint_id!;
    assert.ok(checkpoints.some((checkpoint) => checkpoint.id === afterFirst));
    const page = (await thread.state.listCheckpoints({ limit: 2, before: checkpoints[1]!.id })) as { checkpoints: { id: string }[] };
    assert.deepEqual(
      page.checkpoints.map((checkpoint) => checkpoint.id),
      checkpoints.slice(2, 4).map((checkpoint) => checkpoint.id),
    );

    // The `checkpoints` channel names each state's checkpoint and parent: what useStream builds branches from.
    const envelopes = await events(thread.threadId, { channels: ["lifecycle", "checkpoints"] }, "completed");
    const named = envelopes.filter((event) => event.event === "checkpoints").map((event) => event.data.params.data);
    assert.ok(
      named.some((checkpoint) => checkpoint.id === afterFirst && typeof checkpoint.parent_id === "string"),
      JSON.stringify(named),
    );

    const forked = (await thread.state.fork({ checkpoint_id: afterFirst, input: user("what is my name?") })) as {
      run_id: string;
      thread_id: string;
    };
    assert.equal(forked.thread_id, thread.threadId);
    let messages: unknown[] = [];
    await eventually(async () => {
      messages = ((await thread.state.get({ namespace: [] })) as { values: { messages: unknown[] } }).values.messages;
      assert.equal(messages.length, 4);
      assert.match(textOf(messages.at(-1)), /what is my name/u);
    }, 5_000);
    // The branch knows Ada, not Bob: Bob was said on the other branch.
    assert.match(textOf(messages.at(-1)), /"my name is Ada"/u);
    assert.doesNotMatch(textOf(messages.at(-1)), /Bob/u);

    const elsewhere = await command(thread.threadId, {
      id: 7,
      method: "state.fork",
      params: { checkpoint_id: "1ef00000-0000-6000-8000-000000000000" },
    });
    assert.equal(elsewhere.body.error, "invalid_argument");
    assert.match(String(elsewhere.body.message), /^checkpoint_id: thread .* has no checkpoint/u);
    await thread.close();
  });

  test("input.inject into a running run: the message reaches the graph right after what it runs now", async () => {
    const thread = client.threads.stream({ assistantId: "slow" });
    await thread.run.start({ input: user("first words") });
    // Still running: the injected message waits its turn, then the graph hears it.
    await thread.input.inject({ namespace: [], message: { role: "user", content: "a word in between" } });
    await eventually(async () => {
      const state = (await thread.state.get({ namespace: [] })) as { values: { messages: unknown[] } };
      assert.deepEqual(state.values.messages.map(textOf), [
        "first words",
        "heard: first words",
        "a word in between",
        "heard: a word in between",
      ]);
    }, 10_000);
    const refused = await command(thread.threadId, { id: 8, method: "input.inject", params: { namespace: [], message: { role: "tool" } } });
    assert.equal(refused.body.error, "invalid_argument");
    await thread.close();
  });

  test("input.answered names the interrupts a resume answers, before its run", async () => {
    const thread = client.threads.stream({ assistantId: "approval" });
    const values = thread.values;
    await thread.run.start({ input: user("ship it") });
    await values;
    const [asked] = thread.interrupts as { interruptId: string }[];
    const before = await events(thread.threadId, { channels: ["lifecycle"] }, "interrupted");
    await thread.input.respond({ namespace: [], interrupt_id: asked!.interruptId, response: "approve" });
    const after = await events(thread.threadId, { channels: ["lifecycle", "input"], since: Number(before.at(-1)!.id) }, "completed");
    const answered = after.findIndex((event) => event.event === "input.answered");
    assert.deepEqual(after[answered]?.data.params.data, { interrupt_ids: [asked!.interruptId] });
    const running = after.findIndex((event) => event.event === "lifecycle" && event.data.params.data.event === "running");
    assert.ok(answered < running, "answered before the run that resumes it starts");
    await thread.close();
  });

  test("state.get of a subgraph's namespace reads the subgraph's own state", async () => {
    const thread = client.threads.stream({ assistantId: "nested" });
    const values = thread.values;
    await thread.run.start({ input: user("write") });
    await values;
    const { tree } = (await thread.agent.getTree({})) as { tree: { children?: { namespace: string[] }[] } };
    const child = tree.children?.find((node) => node.namespace[0]?.startsWith("writer:"));
    assert.ok(child, JSON.stringify(tree));
    const state = (await thread.state.get({ namespace: child.namespace })) as { values: { messages: unknown[] } };
    assert.deepEqual(state.values.messages.map(textOf).slice(-2), ["drafted", "polished"]);
    const nowhere = await command(thread.threadId, { id: 9, method: "state.get", params: { namespace: ["nobody:1"] } });
    assert.equal(nowhere.body.error, "invalid_argument");
    await thread.close();
  });
});

describe("protocol v2: bad input", () => {
  test("each mistake is a clear answer in the protocol's shape, never a 500", async () => {
    const threadId = uuid7();
    const malformed = await command(threadId, { method: "run.start" });
    assert.equal(malformed.status, 422);
    assert.match(String(malformed.body.detail), /command is not valid at id/u);
    const unknown = await command(threadId, { id: 1, method: "thread.explode" });
    assert.deepEqual(
      { type: unknown.body.type, id: unknown.body.id, error: unknown.body.error },
      { type: "error", id: 1, error: "unknown_command" },
    );
    assert.deepEqual(unknown.body.meta, { thread_id: threadId, applied_through_seq: 0 });
    const noAssistant = await command(threadId, { id: 2, method: "run.start", params: { input: user("hi") } });
    assert.equal(noAssistant.body.error, "invalid_argument");
    const nobody = await command(threadId, { id: 3, method: "run.start", params: { assistant_id: "nobody", input: user("hi") } });
    assert.equal(nobody.status, 404);
    assert.match(String(nobody.body.detail), /No assistant with id 'nobody'/u);
    const nothingToAnswer = await command(threadId, { id: 4, method: "input.respond", params: { interrupt_id: "x", response: 1 } });
    assert.equal(nothingToAnswer.body.error, "no_such_run");
    const noState = await command(threadId, { id: 5, method: "state.get" });
    assert.equal(noState.body.error, "no_such_run");
    const notUuid = await command("not-a-uuid", { id: 6, method: "run.start", params: { assistant_id: "echo", input: user("hi") } });
    assert.equal(notUuid.body.error, "invalid_argument");
    assert.match(String(notUuid.body.message), /a thread id must be a UUID/u);
    const badChannel = await fetch(`${server.origin}/threads/${threadId}/stream/events`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ channels: ["everything"] }),
    });
    assert.equal(badChannel.status, 422);
    assert.match(((await badChannel.json()) as { detail: string }).detail, /channels\.0: is not a channel of the protocol/u);
    // Answered by the host app's not-found handler, in the Agent Protocol's shape.
    const wrongMethod = await fetch(`${server.origin}/threads/${threadId}/commands`);
    assert.equal(wrongMethod.status, 405);
    assert.equal(wrongMethod.headers.get("allow"), "POST");
    assert.ok(wrongMethod.headers.get("x-request-id"));
    assert.match(((await wrongMethod.json()) as { detail: string }).detail, /does not accept GET; use POST/u);
  });

  test("a follower that leaves is let go, and one still following ends when the server closes", async () => {
    const own = await startTestServer({ echo: { graph: echo, description: "Echo" } }, { langgraph: true });
    const threadId = uuid7();
    const controller = new AbortController();
    const left = await fetch(`${own.origin}/threads/${threadId}/stream/events`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ channels: ["values"] }),
      signal: controller.signal,
    });
    assert.equal(left.status, 200);
    controller.abort();
    const staying = await fetch(`${own.origin}/threads/${threadId}/stream/events`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ channels: ["values"] }),
    });
    const reading = (async () => {
      for await (const _ of staying.body as unknown as AsyncIterable<Uint8Array>);
    })();
    await own.close();
    // The stream ended with the server: the read finishes instead of hanging the test.
    await reading;
  });
});
