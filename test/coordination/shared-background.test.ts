import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { type StreamResponse, type Task, TaskState } from "@a2a-js/sdk";
import { AIMessage } from "@langchain/core/messages";
import { END, interrupt, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { Redis } from "ioredis";
import OpenAI from "openai";
import { ChatServe } from "../../src/app/chat-serve.js";
import { BullmqQueue } from "../../src/background/bullmq-queue.js";
import { GraphRegistry } from "../../src/registry/graph-registry.js";
import { type Backends, backendsFromConfig } from "../../src/server/backends.js";
import { a2aClient, userMessage } from "../helpers/a2a.js";
import { eventually } from "../helpers/eventually.js";
import { assertMatchesResponses } from "../helpers/openai-schema.js";
import { freePort, startRedis } from "../helpers/private-redis.js";
import {
  cleanupsAfterAll,
  dropSchema,
  POSTGRES_URL,
  REDIS_URL,
  requireRedisAndPostgres,
  uniquePrefix,
  uniqueSchema,
} from "../helpers/services.js";

// Two servers in one process, each with its own BullMQ queue, worker and event log on one
// Redis, sharing one Postgres store and checkpointer: as two hosts of a deployment would.
// Reattach, cancel and hand-back across them; the queue down; what is left open.

const skip = await requireRedisAndPostgres();
const cleanups = cleanupsAfterAll();

const STEP_MS = 400;
/** Which node ran on which server, per input. */
const ran: { input: string; node: string; on: string }[] = [];

/** A step that takes its time (and stops when the run is aborted), and says who ran it. */
function step(on: string, node: string) {
  return async (state: typeof MessagesAnnotation.State, config: { signal?: AbortSignal }) => {
    const input = String(state.messages.find((message) => message.getType() === "human")?.text);
    ran.push({ input, node, on });
    await sleep(STEP_MS, undefined, { signal: config.signal });
    return { messages: [new AIMessage(`${node} done`)] };
  };
}

/** Three steps, each taking its time (and stopping when the run is aborted); says who ran each step. */
function stepsGraph(on: string) {
  return new StateGraph(MessagesAnnotation)
    .addNode("one", step(on, "one"))
    .addNode("two", step(on, "two"))
    .addNode("three", step(on, "three"))
    .addEdge(START, "one")
    .addEdge("one", "two")
    .addEdge("two", "three")
    .addEdge("three", END)
    .compile();
}

/** Two slow steps, then a question: an interrupt graph. */
function askingGraph(on: string) {
  return new StateGraph(MessagesAnnotation)
    .addNode("one", step(on, "one"))
    .addNode("two", step(on, "two"))
    .addNode("ask", () => ({ messages: [new AIMessage(`you answered ${String(interrupt({ question: "Proceed?" }))}`)] }))
    .addEdge(START, "one")
    .addEdge("one", "two")
    .addEdge("two", "ask")
    .addEdge("ask", END)
    .compile();
}

interface Host {
  origin: string;
  serve: ChatServe;
  queue: BullmqQueue;
  client: OpenAI;
  close: () => Promise<void>;
}

async function startHost(name: string, backends: Backends, keyPrefix: string, options: { url?: string; timeoutMs?: number } = {}) {
  const registry = new GraphRegistry(
    {
      steps: { graph: stepsGraph(name), description: "three steps" },
      stateful: { graph: stepsGraph(name), description: "three steps on a thread", threads: true },
      asking: { graph: askingGraph(name), description: "two steps, then a question", features: ["INTERRUPTS"] },
    },
    {
      checkpointer: backends.checkpointer,
      runCoordinator: backends.runCoordinator,
      pendingRuns: backends.pendingRuns,
      store: backends.store,
    },
  );
  const timeoutMs = options.timeoutMs ?? 2_000;
  const queue = new BullmqQueue({ url: options.url ?? REDIS_URL, keyPrefix, takeoverAfterMs: 2_000, timeoutMs });
  const serve = new ChatServe({
    graphs: registry,
    background: { concurrency: 2, shared: { queue, events: queue.events, resumable: true, leaseWaitMs: 5_000 } },
    backendTimeoutMs: timeoutMs,
    logger: false,
  });
  const app = await serve.bind({ prefix: "/v1", a2a: true });
  const origin = await app.listen({ host: "127.0.0.1", port: 0 });
  const client = new OpenAI({ baseURL: `${origin}/v1`, apiKey: "x", maxRetries: 0 });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await app.close();
  };
  cleanups.push(close);
  const host = { origin, serve, queue, client, close } satisfies Host;
  hosts.set(name, host);
  return host;
}

async function settled(client: OpenAI, id: string): Promise<OpenAI.Responses.Response> {
  for (;;) {
    const response = await client.responses.retrieve(id);
    if (!["queued", "in_progress"].includes(response.status ?? "")) return response;
    await sleep(50);
  }
}

/** The servers running, by name. */
const hosts = new Map<string, Host>();
let backends: Backends;
let keyPrefix: string;
let a: Host;
let b: Host;
before(async () => {
  if (skip) return;
  const schema = uniqueSchema();
  cleanups.push(() => dropSchema(schema));
  backends = await backendsFromConfig({
    checkpointer: { kind: "postgres", url: POSTGRES_URL, schema },
    coordinator: { kind: "redis", url: REDIS_URL, keyPrefix: uniquePrefix(), leaseTtlMs: 2_000 },
    store: undefined,
  } as never);
  cleanups.push(() => backends.close());
  await backends.setup();
  keyPrefix = `cs-bg-${randomUUID()}`;
  a = await startHost("A", backends, keyPrefix);
  b = await startHost("B", backends, keyPrefix);
});

/** Waits until a step of the input has started, and says where. */
async function running(input: string, node: string): Promise<string> {
  let on = "";
  await eventually(async () => {
    const entry = ran.find((entry) => entry.input === input && entry.node === node);
    assert.ok(entry !== undefined, `${node} of ${input} has not started`);
    on = entry.on;
  }, 10_000);
  return on;
}

describe("background responses on a queue shared by two servers", { skip, timeout: 120_000 }, () => {
  test("queued on one, run by either, retrieved on both; a stream reattached on the other gets every event once, in order", async () => {
    const input = `reattach ${randomUUID()}`;
    const stream = await a.client.responses.create({ model: "steps", input, background: true, stream: true });
    const first: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) {
      first.push(event);
      if (first.length === 2) break;
    }
    const id = (first[0] as OpenAI.Responses.ResponseCreatedEvent).response.id;
    const last = first.at(-1)!.sequence_number;
    const rest: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of await b.client.responses.retrieve(id, { stream: true, starting_after: last })) rest.push(event);
    const all = [...first, ...rest];
    assert.deepEqual(
      all.map((event) => event.sequence_number),
      all.map((_, index) => index),
    );
    assert.equal(all.at(-1)!.type, "response.completed");
    for (const event of all) assertMatchesResponses("ResponseStreamEvent", event);
    const [onA, onB] = [await settled(a.client, id), await settled(b.client, id)];
    assert.equal(onA.status, "completed");
    assert.equal(onB.output_text, "three done");
    // Each step ran once, on one server.
    assert.deepEqual(
      ran.filter((entry) => entry.input === input).map((entry) => entry.node),
      ["one", "two", "three"],
    );
    // The followers' connections are gone once their streams ended.
    await eventually(async () => assert.equal(a.queue.events.followers + b.queue.events.followers, 0, "followers left"), 5_000);
  });

  test("A2A: a task streamed on one server is resubscribed, read and cancelled on the other (tasks in the Postgres store)", async () => {
    const check = { checked: 0, failures: [] as string[] };
    const [onA, onB] = [await a2aClient(a.origin, "steps", check), await a2aClient(b.origin, "steps", check)];
    const input = `a2a ${randomUUID()}`;
    const leaving = new AbortController();
    let taskId = "";
    for await (const event of onA.sendMessageStream({ message: userMessage(input) } as never, { signal: leaving.signal })) {
      if (event.payload?.$case === "task") taskId = event.payload.value.id;
      break;
    }
    leaving.abort();
    await running(input, "one");
    const rest: StreamResponse[] = [];
    for await (const event of onB.resubscribeTask({ id: taskId, tenant: "" })) rest.push(event);
    assert.equal(rest[0]?.payload?.$case, "task", "the other server gives the task first");
    const last = rest.at(-1)!;
    assert.equal(last.payload?.$case === "statusUpdate" ? last.payload.value.status?.state : undefined, TaskState.TASK_STATE_COMPLETED);
    const done = await onA.getTask({ id: taskId, tenant: "" });
    assert.equal(done.status?.state, TaskState.TASK_STATE_COMPLETED);
    const answer = done.artifacts.find((artifact) => artifact.name === "answer")?.parts[0]?.content;
    assert.deepEqual(answer, { $case: "text", value: "three done" });
    // Cancelled from the other server while it runs.
    const second = `a2a cancel ${randomUUID()}`;
    const started = (await onA.sendMessage({ message: userMessage(second), configuration: { returnImmediately: true } } as never)) as Task;
    await running(second, "one");
    const canceled = await onB.cancelTask({ id: started.id, tenant: "", metadata: undefined });
    assert.equal(canceled.status?.state, TaskState.TASK_STATE_CANCELED);
    assert.deepEqual(check.failures, []);
    assert.ok(check.checked > 3);
  });

  test("cancelled from the server that is not running it: ends cancelled within a second, its thread's lease released", async () => {
    const input = `cancel ${randomUUID()}`;
    const created = await a.client.responses.create({ model: "stateful", input, background: true });
    const on = await running(input, "one");
    const other = on === "A" ? b : a;
    const started = Date.now();
    const cancelled = await other.client.responses.cancel(created.id);
    assert.ok(["cancelled", "in_progress"].includes(cancelled.status ?? ""), `status ${cancelled.status}`);
    await eventually(async () => {
      assert.equal((await other.client.responses.retrieve(created.id)).status, "cancelled", "not cancelled yet");
    }, 5_000);
    assert.ok(Date.now() - started < 1_000, `took ${Date.now() - started} ms`);
    assert.ok(!ran.some((entry) => entry.input === input && entry.node === "two"), "a step after the cancel ran");
    // The conversation is free again: a next turn on it runs rather than 409.
    const next = await other.client.responses.create({ model: "stateful", previous_response_id: created.id, input: "next" });
    assert.equal(next.status, "completed");
  });

  test("a response cancelled while it waits for a worker never runs", async () => {
    const inputs = Array.from({ length: 5 }, (_, index) => `busy ${index} ${randomUUID()}`);
    const made = [];
    for (const input of inputs) made.push(await a.client.responses.create({ model: "steps", input, background: true }));
    // Two servers, two at a time each: the fifth waits.
    const waiting = made.at(-1)!;
    const cancelled = await b.client.responses.cancel(waiting.id);
    assert.equal(cancelled.status, "cancelled");
    for (const response of made) await settled(a.client, response.id);
    assert.ok(!ran.some((entry) => entry.input === inputs.at(-1)), "the cancelled response ran");
    assert.equal((await a.client.responses.retrieve(waiting.id)).status, "cancelled");
  });

  /** Stops the server running `input`'s step two, past its grace (it hands the run back); returns a server still up. */
  async function stopDuringStepTwo(input: string): Promise<{ other: Host; on: string }> {
    const on = await running(input, "two");
    const stopping = hosts.get(on)!;
    stopping.serve.drain();
    stopping.serve.abortRuns();
    await stopping.serve.runsSettled();
    await stopping.close();
    hosts.delete(on);
    return { other: [...hosts.values()][0]!, on };
  }

  test("a server out of shutdown grace hands its run back: the other goes on from the last step it completed", async () => {
    const input = `handback ${randomUUID()}`;
    const created = await a.client.responses.create({ model: "steps", input, background: true });
    const { other, on } = await stopDuringStepTwo(input);
    const done = await settled(other.client, created.id);
    assert.equal(done.status, "completed");
    assert.equal(done.output_text, "three done");
    const steps = ran.filter((entry) => entry.input === input);
    // Step one ran once; step two, in flight when the server stopped, ran again on the other.
    assert.deepEqual(
      steps.map((entry) => `${entry.node}@${entry.on === on ? "stopping" : "other"}`),
      ["one@stopping", "two@stopping", "two@other", "three@other"],
    );
  });

  test("an interrupt graph's run handed back goes on from its last step, pauses, and resumes in the background", async () => {
    const host = await startHost("C", backends, keyPrefix);
    const input = `asking ${randomUUID()}`;
    const created = await host.client.responses.create({ model: "asking", input, background: true });
    const { other } = await stopDuringStepTwo(input);
    const paused = await settled(other.client, created.id);
    assert.equal(paused.status, "completed");
    const call = paused.output.find((item) => item.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall;
    assert.equal(call?.name, "graph_interrupt");
    assert.deepEqual(
      ran.filter((entry) => entry.input === input).map((entry) => entry.node),
      ["one", "two", "two"],
    );
    const resumed = await other.client.responses.create({
      model: "asking",
      previous_response_id: paused.id,
      input: [{ type: "function_call_output", call_id: call.call_id, output: "yes" }],
      background: true,
    });
    assert.equal((await settled(other.client, resumed.id)).output_text, "you answered yes");
  });
});

describe("a background response when the queue's Redis is down", { skip, timeout: 60_000 }, () => {
  test("503 backend_unavailable within the deadline, and the stored response reads failed, never queued", async () => {
    const port = await freePort();
    const redis = await startRedis(port);
    cleanups.push(() => void redis.kill("SIGKILL"));
    const host = await startHost("C", backends, `cs-bg-${randomUUID()}`, { url: `redis://127.0.0.1:${port}`, timeoutMs: 500 });
    redis.kill("SIGKILL");
    await eventually(async () => {
      const probe = new Redis(port, { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false });
      probe.on("error", () => {});
      await assert.rejects(probe.connect());
      probe.disconnect();
    }, 5_000);
    const started = Date.now();
    const error = await host.client.responses.create({ model: "steps", input: "x", background: true }).catch((caught: unknown) => caught);
    assert.ok(error instanceof OpenAI.APIError, String(error));
    assert.equal(error.status, 503);
    assert.equal((error.error as { code?: string }).code, "backend_unavailable");
    assert.ok(Date.now() - started < 2_000, `took ${Date.now() - started} ms`);
    const listed = await backends.store.listResponses({ status: "queued", limit: 100 });
    assert.equal(listed.length, 0, "a response was left queued");
    await host.close();
  });
});
