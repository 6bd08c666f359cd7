import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type StreamResponse, type Task, TaskState } from "@a2a-js/sdk";
import { MemorySaver } from "@langchain/langgraph";
import { graph as approvalGraph } from "../../demo/graphs/approval.js";
import { graph as echoGraph } from "../../demo/graphs/echo.js";
import { InMemoryRunCoordinator } from "../../src/coordination/in-memory-run-coordinator.js";
import { type AbortProbe, slowGraph } from "../fixtures/graphs.js";
import { a2aClient, rpc, userMessage, type WireCheck } from "../helpers/a2a.js";
import { assertA2a } from "../helpers/a2a-spec.js";
import { eventually } from "../helpers/eventually.js";
import { trackLiveResources } from "../helpers/live-handles.js";
import { startDemoServer } from "../helpers/mcp.js";
import { startTestServer } from "../helpers/server.js";

type Json = Record<string, any>;

const newCheck = (): WireCheck => ({ checked: 0, failures: [] });
function assertValidated(check: WireCheck): void {
  assert.deepEqual(check.failures, [], "everything the server sent validates");
  assert.ok(check.checked > 0, "the wire was checked");
}

const stateOf = (event: StreamResponse) => (event.payload?.$case === "statusUpdate" ? event.payload.value.status?.state : undefined);
const answerOf = (task: Task) =>
  task.artifacts
    .filter((artifact) => artifact.name === "answer")
    .flatMap((artifact) => artifact.parts.map((part) => (part.content?.$case === "text" ? part.content.value : "")))
    .join("");

describe("A2A on the demo models, through the SDK's own client", () => {
  let server: Awaited<ReturnType<typeof startDemoServer>>;
  before(async () => {
    server = await startDemoServer({ a2a: true });
  });
  after(async () => server.close());

  test("the index lists an agent per model; each card is a valid A2A 1.0 card with streaming and its model as the skill", async () => {
    const index = (await (await fetch(`${server.origin}/v1/a2a`)).json()) as { agents: { name: string; card: string; url: string }[] };
    assert.deepEqual(
      index.agents.map((agent) => agent.name),
      server.registry.getGraphNames(),
    );
    for (const agent of index.agents) {
      const card = (await (await fetch(agent.card)).json()) as Json;
      assertA2a("AgentCard", card, `${agent.name}'s card`);
      assert.equal(card.supportedInterfaces[0].url, agent.url);
      assert.deepEqual(
        card.supportedInterfaces.map((one: { protocolVersion: string }) => one.protocolVersion),
        ["1.0", "0.3"],
      );
      assert.equal(card.capabilities.streaming, true);
      assert.equal(card.capabilities.pushNotifications, false);
      assert.equal(card.skills[0].description, server.registry.getGraph(agent.name).description);
      assert.equal(card.securitySchemes, undefined, "no scheme without auth");
    }
    const missing = await fetch(`${server.origin}/v1/a2a/nope/.well-known/agent-card.json`);
    assert.equal(missing.status, 404);
  });

  test("echo: SendMessage answers with a completed task (the answer an artifact, usage in its metadata); GetTask reads it again", async () => {
    const check = newCheck();
    const client = await a2aClient(server.origin, "echo", check);
    const task = (await client.sendMessage({ message: userMessage("hello from a2a") } as never)) as Task;
    assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(answerOf(task), "hello from a2a");
    assert.ok(Number((task.metadata?.usage as { total_tokens?: number } | undefined)?.total_tokens) > 0, "usage in the metadata");
    assert.equal(task.history.length, 1, "the client's message is the history");
    const again = await client.getTask({ id: task.id, tenant: "", historyLength: 0 });
    assert.equal(answerOf(again), "hello from a2a");
    assert.equal(again.history.length, 0, "historyLength 0 leaves the history out");
    // The same context continues: the next task's graph sees the earlier turn.
    const next = (await client.sendMessage({ message: userMessage("and again", { contextId: task.contextId }) } as never)) as Task;
    assert.equal(next.contextId, task.contextId);
    assert.equal(answerOf(next), "and again");
    assertValidated(check);
  });

  test("research streams its statuses, progress, artifact, the answer in chunks and its sources, in order, then completed", async () => {
    const check = newCheck();
    const client = await a2aClient(server.origin, "research", check);
    const events: StreamResponse[] = [];
    for await (const event of client.sendMessageStream({ message: userMessage("tea history") } as never)) events.push(event);
    const kinds = events.map((event) => event.payload?.$case);
    assert.equal(kinds[0], "task", "the task comes first");
    assert.equal(stateOf(events.at(-1)!), TaskState.TASK_STATE_COMPLETED, "the last event completes it");
    const working = events.filter((event) => stateOf(event) === TaskState.TASK_STATE_WORKING && event.payload?.$case === "statusUpdate");
    const lines = working.flatMap((event) =>
      event.payload?.$case === "statusUpdate"
        ? (event.payload.value.status?.message?.parts ?? []).flatMap((part) => (part.content?.$case === "text" ? [part.content.value] : []))
        : [],
    );
    assert.ok(
      lines.some((line) => /Searching/u.test(line)),
      `a status line among ${JSON.stringify(lines)}`,
    );
    const progress = working.filter(
      (event) => event.payload?.$case === "statusUpdate" && event.payload.value.metadata?.event === "progress",
    );
    assert.ok(progress.length > 0, "progress as working updates");
    const artifacts = events.flatMap((event) => (event.payload?.$case === "artifactUpdate" ? [event.payload.value] : []));
    const names = [...new Set(artifacts.map((update) => update.artifact?.name))];
    assert.ok(names.includes("answer") && names.includes("sources"), `artifacts ${names.join(", ")}`);
    assert.ok(names.length >= 3, "the graph's own artifact too");
    const chunks = artifacts.filter((update) => update.artifact?.name === "answer");
    assert.ok(chunks.length > 2, "the answer in chunks");
    assert.equal(chunks[0]!.append, false);
    assert.ok(chunks.slice(1).every((chunk) => chunk.append));
    assert.equal(chunks.at(-1)!.lastChunk, true);
    const sources = artifacts.find((update) => update.artifact?.name === "sources")!;
    assert.ok(
      sources.artifact!.parts.every((part) => part.content?.$case === "url"),
      "sources are URL parts",
    );
    const firstAnswer = kinds.indexOf("artifactUpdate");
    const lastStatus = events.findLastIndex((event) => event.payload?.$case === "statusUpdate" && event !== events.at(-1));
    assert.ok(firstAnswer > 0 && lastStatus > 0, "statuses and artifacts interleave as the graph made them");
    assertValidated(check);
  });

  test("approval: input-required with the payload as a data part; the next message on the task resumes it; a second answer is refused", async () => {
    const check = newCheck();
    const client = await a2aClient(server.origin, "approval", check);
    const paused = (await client.sendMessage({ message: userMessage("scale up") } as never)) as Task;
    assert.equal(paused.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    const parts = paused.status?.message?.parts ?? [];
    assert.match(parts[0]?.content?.$case === "text" ? parts[0].content.value : "", /May I go ahead with: scale up\?/u);
    assert.deepEqual(parts[1]?.content, {
      $case: "data",
      value: { question: "May I go ahead with: scale up?", options: ["approve", "reject"] },
    });
    const events: StreamResponse[] = [];
    for await (const event of client.sendMessageStream({ message: userMessage("approve", { taskId: paused.id }) } as never))
      events.push(event);
    assert.equal(stateOf(events.at(-1)!), TaskState.TASK_STATE_COMPLETED);
    const done = await client.getTask({ id: paused.id, tenant: "" });
    assert.equal(answerOf(done), "Approved: going ahead with scale up.");
    assert.equal(done.history.length, 2, "both messages of the client");
    await assert.rejects(
      client.sendMessage({ message: userMessage("approve", { taskId: paused.id }) } as never),
      /has ended \(completed\)/u,
    );
    await assert.rejects(client.cancelTask({ id: paused.id, tenant: "", metadata: undefined }), /already ended/u);
    assertValidated(check);
  });

  test("a task waiting for input is cancelled without running; a 0.3 client (message/send, tasks/get) validates against the 0.3 schema", async () => {
    const check = newCheck();
    const client = await a2aClient(server.origin, "approval", check, { version: "0.3" });
    const paused = (await client.sendMessage({ message: userMessage("deploy") } as never)) as Task;
    assert.equal(paused.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    const canceled = await client.cancelTask({ id: paused.id, tenant: "", metadata: undefined });
    assert.equal(canceled.status?.state, TaskState.TASK_STATE_CANCELED);
    await assert.rejects(
      client.sendMessage({ message: userMessage("approve", { taskId: paused.id }) } as never),
      /has ended \(canceled\)/u,
    );
    const streamed: StreamResponse[] = [];
    for await (const event of client.sendMessageStream({ message: userMessage("streamed on 0.3") } as never)) streamed.push(event);
    assert.ok(streamed.length > 2);
    assertValidated(check);
  });

  test("bad input gets the JSON-RPC error A2A names, never a 500", async () => {
    const url = `${server.origin}/v1/a2a/echo`;
    const cases: [unknown, number, Record<string, string>?][] = [
      ["{not json", -32700],
      ["null", -32600],
      ["42", -32600],
      [{ jsonrpc: "2.0", id: 1, method: "NoSuchMethod", params: {} }, -32601],
      [
        {
          jsonrpc: "2.0",
          id: 2,
          method: "SendMessage",
          params: { message: { messageId: "m", role: "ROLE_USER", parts: [{ data: { x: 1 } }] } },
        },
        -32005,
      ],
      [
        {
          jsonrpc: "2.0",
          id: 3,
          method: "SendMessage",
          params: { message: { messageId: "m", role: "ROLE_USER", parts: [{ url: "https://x" }] } },
        },
        -32005,
      ],
      [{ jsonrpc: "2.0", id: 4, method: "SendMessage", params: { message: { messageId: "m", role: "ROLE_USER", parts: [] } } }, -32602],
      [{ jsonrpc: "2.0", id: 5, method: "GetTask", params: { id: "no-such-task" } }, -32001],
      [{ jsonrpc: "2.0", id: 6, method: "CancelTask", params: { id: "no-such-task" } }, -32001],
      [{ jsonrpc: "2.0", id: 7, method: "SubscribeToTask", params: { id: "no-such-task" } }, -32001],
      [
        {
          jsonrpc: "2.0",
          id: 8,
          method: "SendMessage",
          params: { message: { messageId: "m", role: "ROLE_USER", taskId: "nope", parts: [{ text: "x" }] } },
        },
        -32001,
      ],
      [{ jsonrpc: "2.0", id: 9, method: "CreateTaskPushNotificationConfig", params: { taskId: "t", url: "https://x" } }, -32003],
      [{ jsonrpc: "2.0", id: 10, method: "GetTask", params: { id: "x" } }, -32009, { "a2a-version": "2.0" }],
      [
        {
          jsonrpc: "2.0",
          id: 11,
          method: "SendMessage",
          params: { message: { messageId: "m", role: "ROLE_USER", parts: [{ text: "x" }] }, metadata: { settings: "loud" } },
        },
        -32602,
      ],
    ];
    for (const [body, code, headers] of cases) {
      const answer = await rpc(url, body, headers);
      assert.ok(answer.status < 500, `${JSON.stringify(body)} got ${answer.status}`);
      assert.equal(answer.body.error?.code, code, `${JSON.stringify(body).slice(0, 120)} → ${JSON.stringify(answer.body)}`);
      assert.equal(typeof answer.body.error.message, "string");
    }
    const wrongType = await fetch(url, { method: "POST", headers: { "content-type": "text/plain" }, body: "{}" });
    assert.equal(((await wrongType.json()) as Json).error.code, -32005);
    const get = await fetch(url);
    assert.equal(get.status, 405);
  });
});

describe("A2A tasks: cancellation, clients that leave, keys and tenants", () => {
  const probe: AbortProbe = { started: false, chunks: 0, aborted: false, finished: false };
  let server: Awaited<ReturnType<typeof startTestServer>>;
  const [ACME, GLOBEX] = ["sk-acme-0123456789abcdef", "sk-globex-0123456789abcd"];
  const acme = { authorization: `Bearer ${ACME}` };
  before(async () => {
    server = await startTestServer(
      {
        echo: { graph: echoGraph, description: "Echo.", streamableNodeNames: ["respond"] },
        slow: { graph: slowGraph(probe), description: "Streams slowly.", streamableNodeNames: ["respond"] },
        approval: { graph: approvalGraph, description: "Asks first.", features: ["INTERRUPTS"] },
      },
      {
        logger: false,
        a2a: true,
        auth: {
          keys: [
            { key: ACME, tenant: "acme" },
            { key: GLOBEX, tenant: "globex" },
          ],
        },
      },
      { runCoordinator: new InMemoryRunCoordinator(), checkpointer: new MemorySaver() },
    );
  });
  after(async () => server.close());

  test("with keys, the card names the Bearer scheme and stays public; the endpoint wants a key; another tenant's task is not found", async () => {
    const card = (await (await fetch(`${server.origin}/v1/a2a/echo/.well-known/agent-card.json`)).json()) as Json;
    assertA2a("AgentCard", card);
    assert.equal(card.securitySchemes.bearer.httpAuthSecurityScheme.scheme, "Bearer");
    assert.deepEqual(card.securityRequirements, [{ schemes: { bearer: {} } }]);
    const anonymous = await rpc(`${server.origin}/v1/a2a/echo`, { jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "x" } });
    assert.equal(anonymous.status, 401);
    const check = newCheck();
    const client = await a2aClient(server.origin, "echo", check, { headers: acme });
    const task = (await client.sendMessage({ message: userMessage("mine") } as never)) as Task;
    const other = await rpc(
      `${server.origin}/v1/a2a/echo`,
      { jsonrpc: "2.0", id: 2, method: "GetTask", params: { id: task.id } },
      { authorization: `Bearer ${GLOBEX}` },
    );
    assert.equal(other.body.error.code, -32001, "another tenant's task does not exist for it");
    const wrongAgent = await rpc(
      `${server.origin}/v1/a2a/slow`,
      { jsonrpc: "2.0", id: 3, method: "GetTask", params: { id: task.id } },
      acme,
    );
    assert.equal(wrongAgent.body.error.code, -32001, "a task belongs to its agent");
    assertValidated(check);
  });

  test("CancelTask aborts a running task (its run stops, its lease goes); a client that leaves a stream does not cancel, and resubscribes", async () => {
    const check = newCheck();
    const timers = trackLiveResources(["Timeout"], { createdBy: /\/src\/(http|surfaces)\/a2a\// });
    const client = await a2aClient(server.origin, "slow", check, { headers: acme });
    const leaving = new AbortController();
    let taskId = "";
    const stream = client.sendMessageStream({ message: userMessage("go") } as never, { signal: leaving.signal });
    for await (const event of stream) {
      if (event.payload?.$case === "task") taskId = event.payload.value.id;
      if (event.payload?.$case === "artifactUpdate") break;
    }
    leaving.abort();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const still = await client.getTask({ id: taskId, tenant: "" });
    assert.equal(still.status?.state, TaskState.TASK_STATE_WORKING, "leaving the stream left the task running");
    const rest: StreamResponse[] = [];
    for await (const event of client.resubscribeTask({ id: taskId, tenant: "" })) {
      rest.push(event);
      if (rest.length === 3) break;
    }
    assert.equal(rest[0]?.payload?.$case, "task", "a resubscriber gets the task first");
    assert.ok(
      rest.slice(1).every((event) => event.payload?.$case === "artifactUpdate" && event.payload.value.append),
      "then the chunks that follow",
    );
    const canceled = await client.cancelTask({ id: taskId, tenant: "", metadata: undefined });
    assert.equal(canceled.status?.state, TaskState.TASK_STATE_CANCELED);
    await eventually(async () => assert.equal(probe.aborted, true, "the run was aborted"), 5_000);
    assert.equal(probe.finished, false);
    await eventually(async () => assert.equal(server.serve.activeRuns, 0, "no run left in flight"), 5_000);
    await assert.rejects(client.cancelTask({ id: taskId, tenant: "", metadata: undefined }), /already ended/u);
    await assert.rejects(async () => {
      for await (const _ of client.resubscribeTask({ id: taskId, tenant: "" }));
    }, /has ended \(canceled\)/u);
    // The streams' keep-alive timers end with them.
    await eventually(async () => assert.equal(timers.count(), 0, `${timers.count()} A2A timers outlive their streams`), 5_000);
    timers.stop();
    assertValidated(check);
  });
  test("a draining server starts no new task (503, Retry-After) but still answers about the tasks it has", async () => {
    const check = newCheck();
    const client = await a2aClient(server.origin, "echo", check, { headers: acme });
    const task = (await client.sendMessage({ message: userMessage("before the drain") } as never)) as Task;
    server.serve.drain();
    const send = {
      jsonrpc: "2.0",
      id: 1,
      method: "SendMessage",
      params: { message: { messageId: "m", role: "ROLE_USER", parts: [{ text: "x" }] } },
    };
    const refused = await fetch(`${server.origin}/v1/a2a/echo`, {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0", ...acme },
      body: JSON.stringify(send),
    });
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get("retry-after"), "1");
    assert.equal(((await refused.json()) as Json).error.code, -32603);
    assert.equal((await client.getTask({ id: task.id, tenant: "" })).status?.state, TaskState.TASK_STATE_COMPLETED);
    assertValidated(check);
  });
});
