import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { AIMessage } from "@langchain/core/messages";
import { END, interrupt, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import OpenAI from "openai";
import { ChatServe } from "../../src/app/chat-serve.js";
import { WebhookSender } from "../../src/background/webhooks.js";
import { webhookTargetsOf } from "../../src/config/define-config.js";
import { InMemoryRunCoordinator } from "../../src/coordination/in-memory-run-coordinator.js";
import { GraphRegistry } from "../../src/registry/graph-registry.js";
import { ScriptedChatModel } from "../../src/testing/scripted-chat-model.js";
import { eventually } from "../helpers/eventually.js";
import { startReceiver } from "../helpers/loopback-receiver.js";
import { assertMatchesResponses } from "../helpers/openai-schema.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// Background responses on the embedded queue, through the real `openai` client: queued at
// once, polled, streamed and reattached, cancelled, paused and resumed.

/** A model that answers in words; the node around it takes its time, so a test can act meanwhile. */
const model = new ScriptedChatModel({ respond: (messages) => `slowly: ${messages.at(-1)?.text ?? ""} one two three four five six` });
const probe = { aborted: 0 };

function slowGraph() {
  return new StateGraph(MessagesAnnotation)
    .addNode("respond", async (state, config) => {
      try {
        // 300 ms of work that stops when the run is aborted.
        await sleep(300, undefined, { signal: config.signal as AbortSignal });
      } catch (error) {
        probe.aborted += 1;
        throw error;
      }
      return { messages: [await model.invoke(state.messages, config)] };
    })
    .addEdge(START, "respond")
    .addEdge("respond", END)
    .compile();
}

function askingGraph() {
  return new StateGraph(MessagesAnnotation)
    .addNode("ask", () => ({ messages: [new AIMessage(`you answered ${String(interrupt({ question: "Proceed?" }))}`)] }))
    .addEdge(START, "ask")
    .addEdge("ask", END)
    .compile();
}

const coordinator = new InMemoryRunCoordinator();
let server: TestServer;
let client: OpenAI;
before(async () => {
  server = await startTestServer({
    slow: { graph: slowGraph(), description: "slow", streamableNodeNames: ["respond"] },
    stateful: {
      graph: slowGraph(),
      description: "slow, on threads",
      streamableNodeNames: ["respond"],
      threads: true,
      runCoordinator: coordinator,
    },
    asking: { graph: askingGraph(), description: "asks", features: ["INTERRUPTS"], runCoordinator: coordinator },
  });
  client = new OpenAI({ baseURL: server.baseURL, apiKey: "x", maxRetries: 0 });
});
after(() => server.close());

/** Polls a response until it has ended. */
async function settled(id: string): Promise<OpenAI.Responses.Response> {
  for (;;) {
    const response = await client.responses.retrieve(id);
    assertMatchesResponses("Response", response);
    if (!["queued", "in_progress"].includes(response.status ?? "")) return response;
    await sleep(20);
  }
}

describe("background responses", () => {
  test("answered at once as queued, then polled through in_progress to completed", async () => {
    const created = await client.responses.create({ model: "slow", input: "hello", background: true });
    assert.equal(created.status, "queued");
    assert.equal(created.background, true);
    assert.equal(created.output.length, 0);
    const seen = new Set<string>();
    for (;;) {
      const now = await client.responses.retrieve(created.id);
      seen.add(now.status ?? "");
      if (now.status === "completed") {
        assert.equal(now.output_text, "slowly: hello one two three four five six");
        break;
      }
      await sleep(15);
    }
    assert.ok(seen.has("in_progress"), `statuses seen: ${[...seen]}`);
    assertMatchesResponses("Response", created);
  });

  test("a stream left after a few events is reattached from its sequence number: every event once, in order", async () => {
    const stream = await client.responses.create({ model: "slow", input: "streamed", background: true, stream: true });
    const first: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) {
      first.push(event);
      if (first.length === 4) break;
    }
    assert.equal(first[0]!.type, "response.created");
    const id = (first[0] as OpenAI.Responses.ResponseCreatedEvent).response.id;
    assert.equal((first[0] as OpenAI.Responses.ResponseCreatedEvent).response.status, "queued");
    const last = first.at(-1)!.sequence_number;
    const rest: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of await client.responses.retrieve(id, { stream: true, starting_after: last })) rest.push(event);
    const all = [...first, ...rest];
    assert.deepEqual(
      all.map((event) => event.sequence_number),
      all.map((_event, index) => index),
      "every event exactly once, in order",
    );
    for (const event of all) assertMatchesResponses("ResponseStreamEvent", event);
    assert.equal(all.at(-1)!.type, "response.completed");
    const text = all.flatMap((event) => (event.type === "response.output_text.delta" ? [event.delta] : [])).join("");
    assert.equal(text, "slowly: streamed one two three four five six");
    // The client left: the run went on, and a replay from the start gives the same events.
    const again: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of await client.responses.retrieve(id, { stream: true })) again.push(event);
    assert.deepEqual(again, all);
  });

  test("cancel ends a running response: its signal fires, its lease is released, it reads cancelled", async () => {
    const aborted = probe.aborted;
    const created = await client.responses.create({ model: "stateful", input: "cancel me", background: true });
    while ((await client.responses.retrieve(created.id)).status !== "in_progress") await sleep(10);
    await sleep(50);
    const cancelled = await client.responses.cancel(created.id);
    assert.equal(cancelled.status, "cancelled");
    assert.equal(probe.aborted, aborted + 1, "the graph's run was aborted");
    assert.equal(coordinator.size, 0, "the thread's lease was released");
    assert.equal((await client.responses.retrieve(created.id)).status, "cancelled");
    // Idempotent: a cancelled (or finished) response answers as it is.
    assert.equal((await client.responses.cancel(created.id)).status, "cancelled");
    const done = await settled((await client.responses.create({ model: "slow", input: "x", background: true })).id);
    assert.equal((await client.responses.cancel(done.id)).status, "completed");
  });

  test("a background run that pauses ends completed with its graph_interrupt call; the resume can be background too", async () => {
    const paused = await settled((await client.responses.create({ model: "asking", input: "go", background: true })).id);
    assert.equal(paused.status, "completed");
    const call = paused.output.find((item) => item.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall;
    assert.equal(call.name, "graph_interrupt");
    const resumed = await client.responses.create({
      model: "asking",
      previous_response_id: paused.id,
      input: [{ type: "function_call_output", call_id: call.call_id, output: "yes" }],
      background: true,
    });
    assert.equal((await settled(resumed.id)).output_text, "you answered yes");
  });

  test("bad input: a clear 4xx before anything runs", async () => {
    const rejects = async (promise: Promise<unknown>, status: number, param: string | null) =>
      assert.rejects(promise, (error: InstanceType<typeof OpenAI.APIError>) => {
        assert.equal(error.status, status, error.message);
        assert.equal(error.param, param, error.message);
        return true;
      });
    await rejects(client.responses.create({ model: "slow", input: "x", background: true, store: false }), 400, "store");
    const foreground = await client.responses.create({ model: "slow", input: "x" });
    await rejects(client.responses.cancel(foreground.id), 400, "response_id");
    await rejects(client.responses.retrieve(foreground.id, { stream: true }) as Promise<unknown>, 400, "stream");
    const quiet = await settled((await client.responses.create({ model: "slow", input: "x", background: true })).id);
    await rejects(client.responses.retrieve(quiet.id, { stream: true }) as Promise<unknown>, 400, "stream");
    const streamed = await client.responses.create({ model: "slow", input: "x", background: true, stream: true });
    let id = "";
    let last = 0;
    for await (const event of streamed) {
      if (event.type === "response.created") id = event.response.id;
      last = event.sequence_number;
    }
    await rejects(client.responses.retrieve(id, { stream: true, starting_after: last }) as Promise<unknown>, 400, "starting_after");
    const raw = await fetch(`${server.baseURL}/responses/${id}?stream=true&starting_after=two`);
    assert.equal(raw.status, 400);
    assert.equal(((await raw.json()) as { error: { param: string } }).error.param, "starting_after");
    await rejects(
      client.responses.create({ model: "slow", previous_response_id: "resp_nothing", input: "x", background: true }),
      404,
      "previous_response_id",
    );
  });
});

describe("webhooks", () => {
  test("a background response that ends is announced, signed as OpenAI signs it, retried until delivered", async () => {
    const secret = `whsec_${Buffer.from("a signing secret of thirty-two b").toString("base64")}`;
    const receiver = await startReceiver({ failFirst: 1 });
    const failuresOnly = await startReceiver();
    const hooked = await startTestServer(
      { slow: { graph: slowGraph(), description: "slow", streamableNodeNames: ["respond"] } },
      {
        webhooks: [
          { url: `${receiver.url}/hooks`, secret },
          { url: failuresOnly.url, secret: "plain secret", events: ["response.failed"] },
        ],
      },
    );
    try {
      const hookedClient = new OpenAI({ baseURL: hooked.baseURL, apiKey: "x", maxRetries: 0, webhookSecret: secret });
      const created = await hookedClient.responses.create({ model: "slow", input: "announce me", background: true });
      await eventually(async () => {
        assert.equal(receiver.requests.length, 2, "the first delivery failed, the retry arrived");
      }, 10_000);
      const [failed, delivered] = receiver.requests;
      assert.equal(failed!.headers["webhook-id"], delivered!.headers["webhook-id"], "a retry is the same event");
      const event = await hookedClient.webhooks.unwrap(delivered!.body, delivered!.headers as Record<string, string>);
      assert.equal(event.type, "response.completed");
      assert.equal(event.data.id, created.id);
      await assert.rejects(hookedClient.webhooks.unwrap(delivered!.body, delivered!.headers as Record<string, string>, "whsec_d3Jvbmc="));

      const cancelled = await hookedClient.responses.create({ model: "slow", input: "stop", background: true });
      await hookedClient.responses.cancel(cancelled.id);
      await eventually(async () => {
        assert.equal(receiver.requests.length, 3, "the cancel was announced");
      }, 10_000);
      const cancelEvent = await hookedClient.webhooks.unwrap(
        receiver.requests[2]!.body,
        receiver.requests[2]!.headers as Record<string, string>,
      );
      assert.equal(cancelEvent.type, "response.cancelled");
      assert.equal(failuresOnly.requests.length, 0, "a target hears only the events it asked for");
    } finally {
      await hooked.close();
      await receiver.close();
      await failuresOnly.close();
    }
  });

  test("each webhook has its own per-attempt timeout, and each attempt is counted by what it was", async () => {
    const slow = await startReceiver({ delayMs: 400 });
    const attempts: Record<string, string[]> = { short: [], long: [] };
    const finals: string[] = [];
    const sender = (which: "short" | "long", timeoutMs: number) =>
      new WebhookSender([{ url: `${slow.url}/${which}`, secret: "s", timeoutMs }], {
        attempts: 2,
        firstRetryMs: 50,
        observeAttempt: (outcome) => attempts[which]!.push(outcome),
        observe: (outcome) => finals.push(`${which}:${outcome}`),
      });
    const short = sender("short", 100);
    const long = sender("long", 5_000);
    try {
      short.responseEnded("response.completed", "resp_1");
      long.responseEnded("response.completed", "resp_1");
      await eventually(async () => assert.equal(short.pending + long.pending, 0), 10_000);
      // A receiver slower than the timeout is not "refused": its attempts timed out (and were sent again).
      assert.deepEqual(attempts.short, ["timed_out", "timed_out"]);
      assert.deepEqual(attempts.long, ["delivered"]);
      assert.deepEqual(finals.sort(), ["long:delivered", "short:failed"]);
      assert.equal(slow.requests.filter((request) => request.url === "/long").length, 1, "a timeout that fits: sent once");
    } finally {
      short.close();
      long.close();
      await slow.close();
    }
    // In the config file, `timeout` is a duration.
    assert.deepEqual(webhookTargetsOf({ webhooks: [{ url: "http://x", secret: "s", timeout: "20s" }] }), [
      { url: "http://x", secret: "s", timeoutMs: 20_000 },
    ]);
  });

  test("a webhook URL that is not http(s) is refused when the server is built", () => {
    assert.throws(
      () =>
        new ChatServe({
          graphs: new GraphRegistry({ slow: { graph: slowGraph(), description: "slow" } }),
          webhooks: [{ url: "ftp://x", secret: "s" }],
        }),
      /webhooks\.0\.url: must be an http\(s\) URL/u,
    );
  });
});

describe("background metrics", () => {
  test("queued and running gauges, ended by status, queue wait and run time per model", async () => {
    const measured = await startTestServer(
      { slow: { graph: slowGraph(), description: "slow", streamableNodeNames: ["respond"] } },
      { metrics: {}, background: { concurrency: 1 } },
    );
    try {
      const measuredClient = new OpenAI({ baseURL: measured.baseURL, apiKey: "x", maxRetries: 0 });
      const first = await measuredClient.responses.create({ model: "slow", input: "one", background: true });
      const second = await measuredClient.responses.create({ model: "slow", input: "two", background: true });
      const scrape = async () => (await fetch(`${measured.origin}/metrics`)).text();
      const during = await scrape();
      assert.match(during, /^chat_serve_background_runs\{state="queued"\} 1$/mu, "one waits behind the other (concurrency 1)");
      assert.match(during, /^chat_serve_background_runs\{state="running"\} 1$/mu);
      await measuredClient.responses.cancel(second.id);
      while ((await measuredClient.responses.retrieve(first.id)).status !== "completed") await sleep(20);
      const after = await scrape();
      assert.match(after, /^chat_serve_background_finished_total\{model="slow",status="completed"\} 1$/mu);
      assert.match(after, /^chat_serve_background_finished_total\{model="slow",status="cancelled"\} 1$/mu);
      assert.match(after, /^chat_serve_background_queue_wait_seconds_count\{model="slow"\} 1$/mu, "the cancelled one never started");
      assert.match(after, /^chat_serve_background_run_seconds_count\{model="slow"\} 1$/mu);
      assert.match(after, /^chat_serve_background_runs\{state="running"\} 0$/mu);
    } finally {
      await measured.close();
    }
  });
});

describe("background runs and a drain", () => {
  test("a drain ends the background responses still waiting as failed, saying why; the running one finishes", async () => {
    const draining = await startTestServer(
      { slow: { graph: slowGraph(), description: "slow", streamableNodeNames: ["respond"] } },
      { background: { concurrency: 1 } },
    );
    try {
      const drainingClient = new OpenAI({ baseURL: draining.baseURL, apiKey: "x", maxRetries: 0 });
      const running = await drainingClient.responses.create({ model: "slow", input: "first", background: true });
      const waiting = await drainingClient.responses.create({ model: "slow", input: "second", background: true });
      draining.serve.drain();
      const failed = await drainingClient.responses.retrieve(waiting.id);
      assert.equal(failed.status, "failed");
      assert.match(failed.error?.message ?? "", /shutting down|stopping/iu);
      await draining.serve.runsSettled();
      const done = await drainingClient.responses.retrieve(running.id);
      assert.equal(done.status, "completed");
    } finally {
      await draining.close();
    }
  });
});
