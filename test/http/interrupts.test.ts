import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { MemorySaver } from "@langchain/langgraph";
import OpenAI from "openai";
import { graph as approvalGraph } from "../../demo/graphs/approval.js";
import { InMemoryRunCoordinator } from "../../src/coordination/in-memory-run-coordinator.js";
import { RegistrationError } from "../../src/errors/developer-errors.js";
import { GraphRegistry } from "../../src/registry/graph-registry.js";
import { checkpointKey } from "../../src/runs/interrupts/checkpoint-key.js";
import {
  badPayloadGraph,
  type Counter,
  counterGraph,
  failAfterResumeGraph,
  parallelGraph,
  sequentialGraph,
  slowBeforeInterruptGraph,
  speakThenAskGraph,
} from "../fixtures/interrupt-graphs.js";
import { assertMatchesOpenAI } from "../helpers/openai-schema.js";
import { answerBatch } from "../helpers/resume.js";
import type { TestServer } from "../helpers/server.js";

type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type ToolCall = OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;

const coordinator = new InMemoryRunCoordinator();
const saver = new MemorySaver();
const counter: Counter = { before: 0, after: 0 };
const slowCounter: Counter = { before: 0, after: 0 };
const slowProbe = { started: false, aborted: false };
let server: TestServer;
let client: OpenAI;

const interruptGraph = (graph: unknown) => ({ graph: graph as never, description: "x", features: ["INTERRUPTS" as const] });

before(async () => {
  const registry = new GraphRegistry(
    {
      approval: interruptGraph(approvalGraph),
      counter: interruptGraph(counterGraph(counter)),
      "slow-after": interruptGraph(counterGraph(slowCounter, { afterDelayMs: 100 })),
      parallel: interruptGraph(parallelGraph()),
      sequential: interruptGraph(sequentialGraph()),
      "fail-after-resume": interruptGraph(failAfterResumeGraph()),
      "bad-payload": interruptGraph(badPayloadGraph()),
      "slow-before": interruptGraph(slowBeforeInterruptGraph(slowProbe)),
      "speak-then-ask": { ...interruptGraph(speakThenAskGraph()), streamableNodeNames: ["intro"] },
    },
    { runCoordinator: coordinator, checkpointer: saver },
  );
  const { ChatServe } = await import("../../src/app/chat-serve.js");
  const serve = new ChatServe({
    graphs: registry,
    // Server-trusted scope from a header a real deployment would set after authentication.
    checkpointScope: async (request) => String(request.headers["x-tenant"] ?? "default"),
  });
  const app = await serve.bind({ prefix: "/v1" });
  const origin = await app.listen({ host: "127.0.0.1", port: 0 });
  server = { serve, app, origin, baseURL: `${origin}/v1`, close: () => app.close() };
  client = new OpenAI({ baseURL: server.baseURL, apiKey: "x", maxRetries: 0 });
});
after(() => server.close());

const user = (content: string): Message => ({ role: "user", content });

async function ask(model: string, messages: Message[], options: { metadata?: Record<string, string>; tenant?: string } = {}) {
  const completion = await client.chat.completions.create(
    { model, messages, metadata: options.metadata },
    { headers: options.tenant ? { "x-tenant": options.tenant } : {} },
  );
  assertMatchesOpenAI("CreateChatCompletionResponse", completion);
  return completion;
}

function interruptCalls(completion: OpenAI.Chat.Completions.ChatCompletion): ToolCall[] {
  const choice = completion.choices[0]!;
  assert.equal(choice.finish_reason, "tool_calls");
  const calls = (choice.message.tool_calls ?? []) as ToolCall[];
  assert.ok(calls.length > 0 && calls.every((call) => call.function.name === "graph_interrupt"));
  return calls;
}

const argsOf = (call: ToolCall) => JSON.parse(call.function.arguments) as { run_id: string; state_token: string; payload: unknown };

/** The conversation that answers a batch: the assistant's calls, then one tool message each. */
function answer(history: Message[], calls: ToolCall[], answers: unknown[]): Message[] {
  return answerBatch(history, calls, (_call, index) => JSON.stringify({ resume: answers[index] }));
}

async function expectError(promise: Promise<unknown>, status: number, code: string) {
  await assert.rejects(promise, (error: InstanceType<typeof OpenAI.APIError>) => {
    assert.equal(error.status, status, error.message);
    assert.equal(error.code, code, error.message);
    return true;
  });
}

const keyOf = (model: string, runId: string, scope = "default") => checkpointKey(scope, model, runId);
const checkpointOf = (model: string, runId: string, scope?: string) =>
  saver.getTuple({ configurable: { thread_id: keyOf(model, runId, scope) } });

describe("pause, answer, finish", () => {
  test("complete responses: approval pauses with a question and finishes with the reply", async () => {
    const history = [user("deploy the new release")];
    const paused = await ask("approval", history);
    const [call] = interruptCalls(paused);
    assert.equal(paused.choices[0]?.message.content, null);
    const args = argsOf(call!);
    assert.deepEqual(args.payload, { question: "May I go ahead with: deploy the new release?", options: ["approve", "reject"] });
    assert.match(args.state_token, /^[0-9a-f]{32}$/);
    assert.ok(await checkpointOf("approval", args.run_id), "the pending checkpoint is kept");
    assert.ok(await server.serve.registry.pendingRuns.get(keyOf("approval", args.run_id)), "and indexed");

    const done = await ask("approval", answer(history, [call!], ["approve"]));
    assert.equal(done.choices[0]?.message.content, "Approved: going ahead with deploy the new release.");
    assert.equal(done.choices[0]?.finish_reason, "stop");
    assert.equal(await checkpointOf("approval", args.run_id), undefined, "completion deletes the checkpoint");
    assert.equal(await server.serve.registry.pendingRuns.get(keyOf("approval", args.run_id)), undefined, "and its index entry");
    assert.equal(coordinator.size, 0, "every lease was released");
  });

  test("a tool message that is not JSON is the answer as a string", async () => {
    const history = [user("rename the project")];
    const calls = interruptCalls(await ask("approval", history));
    const messages = answerBatch(history, calls, "no way");
    assert.equal(
      (await ask("approval", messages)).choices[0]?.message.content,
      'Not approved (you said "no way"): I will not do rename the project.',
    );
  });

  test("streaming: the batch arrives as one tool-call delta, and the resume streams the answer", async () => {
    const history = [user("archive the logs")];
    const stream = await client.chat.completions.create({ model: "approval", messages: history, stream: true });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    for (const chunk of chunks) assertMatchesOpenAI("CreateChatCompletionStreamResponse", chunk);
    const withCalls = chunks.filter((chunk) => chunk.choices[0]?.delta.tool_calls);
    assert.equal(withCalls.length, 1);
    assert.equal(chunks.at(-1)?.choices[0]?.finish_reason, "tool_calls");
    const calls = withCalls[0]!.choices[0]!.delta.tool_calls!.map(({ index: _index, ...call }) => call) as ToolCall[];
    const resumed = await client.chat.completions.create({
      model: "approval",
      messages: answer(history, calls, ["approve"]),
      stream: true,
    });
    let text = "";
    let finish: string | null = null;
    for await (const chunk of resumed) {
      text += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    assert.equal(text, "Approved: going ahead with archive the logs.");
    assert.equal(finish, "stop");
  });

  test("text streamed before a pause is the same in the complete response, beside the batch", async () => {
    const complete = await ask("speak-then-ask", [user("go")]);
    assert.equal(complete.choices[0]?.message.content, "Let me check with you first.");
    assert.equal(interruptCalls(complete).length, 1);
    const stream = await client.chat.completions.create({ model: "speak-then-ask", messages: [user("go")], stream: true });
    let text = "";
    let calls = 0;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      calls += chunk.choices[0]?.delta.tool_calls?.length ?? 0;
    }
    assert.equal(text, "Let me check with you first.");
    assert.equal(calls, 1);
  });

  test("a two-interrupt parallel batch is answered in one round trip", async () => {
    const history = [user("both sides")];
    const calls = interruptCalls(await ask("parallel", history));
    assert.equal(calls.length, 2);
    assert.deepEqual(
      calls.map((call) => argsOf(call).payload).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
      [{ side: "left" }, { side: "right" }],
    );
    assert.equal(new Set(calls.map((call) => argsOf(call).state_token)).size, 1);
    const answers = calls.map((call) => `${(argsOf(call).payload as { side: string }).side}-ok`);
    const done = await ask("parallel", answer(history, calls, answers));
    assert.equal(done.choices[0]?.message.content, 'left="left-ok" & right="right-ok"');
  });

  test("two sequential interrupts in one run are two round trips; the older batch is then stale", async () => {
    let history = [user("interview me")];
    const first = interruptCalls(await ask("sequential", history));
    assert.equal(argsOf(first[0]!).payload, "What is your name?");
    const afterFirst = answer(history, first, ["Ada"]);
    const second = interruptCalls(await ask("sequential", afterFirst));
    assert.equal(argsOf(second[0]!).payload, "Hello Ada, what is your favourite colour?");
    assert.equal(argsOf(second[0]!).run_id, argsOf(first[0]!).run_id, "one run");
    // Answering the first batch again, after the later interrupt: stale.
    await expectError(ask("sequential", afterFirst), 409, "interrupt_state_conflict");
    history = answer(afterFirst, second, ["green"]);
    assert.equal((await ask("sequential", history)).choices[0]?.message.content, "Ada likes green");
  });
});

describe("state table and errors", () => {
  test("repeating the initial request with the same graph_run_id returns the same batch without running the graph", async () => {
    const runId = randomUUID();
    const before = counter.before;
    const first = await ask("counter", [user("go")], { metadata: { graph_run_id: runId } });
    const again = await ask("counter", [user("go")], { metadata: { graph_run_id: runId } });
    assert.deepEqual(interruptCalls(again), interruptCalls(first));
    assert.equal(argsOf(interruptCalls(first)[0]!).run_id, runId);
    assert.equal(counter.before, before + 1, "the graph ran once");
  });

  test("graph_run_id must be a non-nil UUID", async () => {
    await expectError(ask("counter", [user("go")], { metadata: { graph_run_id: "run-1" } }), 400, "invalid_run_id");
    await expectError(
      ask("counter", [user("go")], { metadata: { graph_run_id: "00000000-0000-0000-0000-000000000000" } }),
      400,
      "invalid_run_id",
    );
  });

  test("a fabricated tool-call id is a state conflict", async () => {
    const history = [user("go")];
    const [call] = interruptCalls(await ask("counter", history));
    const fake = { ...call!, id: "call_0123456789abcdef" };
    await expectError(ask("counter", answer(history, [fake], ["yes"])), 409, "interrupt_state_conflict");
  });

  test("a mixed batch, a partial batch, a duplicated answer and broken arguments are invalid resumes", async () => {
    const history = [user("both")];
    const calls = interruptCalls(await ask("parallel", history));
    const other: ToolCall = { id: "call_weather", type: "function", function: { name: "get_weather", arguments: "{}" } };
    await expectError(ask("parallel", answer(history, [calls[0]!, other], ["a", "b"])), 400, "invalid_resume");
    const partial: Message[] = [
      ...history,
      { role: "assistant", content: null, tool_calls: calls },
      { role: "tool", tool_call_id: calls[0]!.id, content: "a" },
    ];
    await expectError(ask("parallel", partial), 400, "invalid_resume");
    const duplicated: Message[] = [...partial, { role: "tool", tool_call_id: calls[0]!.id, content: "again" }];
    await expectError(ask("parallel", duplicated), 400, "invalid_resume");
    const broken = calls.map((call) => ({ ...call, function: { ...call.function, arguments: "{not json" } }));
    await expectError(ask("parallel", answer(history, broken, ["a", "b"])), 400, "invalid_resume");
    // The run is still pending and answerable.
    assert.equal((await ask("parallel", answer(history, calls, ["a", "b"]))).choices[0]?.finish_reason, "stop");
  });

  test("a run ID that does not match the calls is an invalid resume", async () => {
    const history = [user("go")];
    const calls = interruptCalls(await ask("counter", history));
    await expectError(ask("counter", answer(history, calls, ["yes"]), { metadata: { graph_run_id: randomUUID() } }), 400, "invalid_resume");
  });

  test("another scope cannot see the run; the user field never picks the scope", async () => {
    const history = [user("tenant work")];
    const calls = interruptCalls(await ask("counter", history, { tenant: "acme" }));
    await expectError(ask("counter", answer(history, calls, ["yes"]), { tenant: "globex" }), 409, "interrupt_state_conflict");
    await expectError(ask("counter", answer(history, calls, ["yes"])), 409, "interrupt_state_conflict");
    const done = await client.chat.completions.create(
      { model: "counter", messages: answer(history, calls, ["yes"]), user: "globex" },
      { headers: { "x-tenant": "acme" } },
    );
    assert.equal(done.choices[0]?.finish_reason, "stop");
    assert.equal(await checkpointOf("counter", argsOf(calls[0]!).run_id, "acme"), undefined);
  });

  test("a second request for a run in progress is a 409 run_busy before any byte, never queued", async () => {
    const runId = randomUUID();
    const lease = await coordinator.tryAcquire(keyOf("counter", runId));
    try {
      const response = await fetch(`${server.baseURL}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "counter", stream: true, messages: [user("go")], metadata: { graph_run_id: runId } }),
      });
      assert.equal(response.status, 409);
      assert.equal(((await response.json()) as { error: { code: string } }).error.code, "run_busy");
    } finally {
      await lease!.release();
    }
  });

  test("a failure after resuming deletes the checkpoint and the index entry", async () => {
    const history = [user("go")];
    const calls = interruptCalls(await ask("fail-after-resume", history));
    const runId = argsOf(calls[0]!).run_id;
    assert.ok(await checkpointOf("fail-after-resume", runId));
    await expectError(ask("fail-after-resume", answer(history, calls, ["yes"])), 500, "internal_error");
    assert.equal(await checkpointOf("fail-after-resume", runId), undefined);
    assert.equal(await server.serve.registry.pendingRuns.get(keyOf("fail-after-resume", runId)), undefined);
    assert.equal(coordinator.size, 0);
  });

  test("interrupt data that is not JSON is refused (500 invalid_interrupt_payload), and the checkpoint deleted", async () => {
    const runId = randomUUID();
    await expectError(ask("bad-payload", [user("go")], { metadata: { graph_run_id: runId } }), 500, "invalid_interrupt_payload");
    assert.equal(await checkpointOf("bad-payload", runId), undefined);
  });

  test("a cancelled run (client gone before any batch) has its checkpoint deleted and its lease released", async () => {
    const runId = randomUUID();
    const controller = new AbortController();
    const pending = client.chat.completions
      .create({ model: "slow-before", messages: [user("go")], metadata: { graph_run_id: runId } }, { signal: controller.signal })
      .catch(() => undefined);
    while (!slowProbe.started) await sleep(5);
    assert.ok(await checkpointOf("slow-before", runId), "the run had written a checkpoint");
    controller.abort();
    await pending;
    while (coordinator.size > 0 || !slowProbe.aborted) await sleep(5);
    assert.equal(await checkpointOf("slow-before", runId), undefined);
  });
});

describe("concurrency", () => {
  test("20 simultaneous resumes of one pending run: exactly one proceeds, the node after the interrupt runs once", async () => {
    const history = [user("race")];
    const calls = interruptCalls(await ask("slow-after", history));
    const before = slowCounter.after;
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => ask("slow-after", answer(history, calls, ["go"]))));
    const succeeded = results.filter((result) => result.status === "fulfilled");
    assert.equal(succeeded.length, 1);
    for (const result of results) {
      if (result.status === "rejected") {
        const error = result.reason as InstanceType<typeof OpenAI.APIError>;
        assert.equal(error.status, 409);
        assert.ok(["run_busy", "interrupt_state_conflict"].includes(String(error.code)), String(error.code));
      }
    }
    assert.equal(slowCounter.after - before, 1);
  });
});

describe("registration", () => {
  test("an interrupt graph without a run coordinator is refused, naming the model", () => {
    assert.throws(
      () => new GraphRegistry({ approval: interruptGraph(approvalGraph) }),
      (error: Error) =>
        error instanceof RegistrationError && /^model 'approval': has INTERRUPTS but no run coordinator/.test(error.message),
    );
  });

  test("a checkpointer lacking a required method is refused; a graph without one gets the configured one", async () => {
    const lacking = { getTuple: async () => undefined, list: async function* () {}, put: async () => ({}), putWrites: async () => {} };
    const registry = new GraphRegistry(
      { broken: interruptGraph(counterGraph({ before: 0, after: 0 })) },
      { runCoordinator: new InMemoryRunCoordinator(), checkpointer: lacking },
    );
    await assert.rejects(registry.validateAll(), /model 'broken'.*checkpointer of model 'broken' lacks deleteThread/);
    const fallback = new MemorySaver();
    const given = new GraphRegistry(
      { ok: interruptGraph(counterGraph({ before: 0, after: 0 })) },
      { runCoordinator: new InMemoryRunCoordinator(), checkpointer: fallback },
    );
    assert.equal((await given.resolveGraph("ok")).checkpointer, fallback);
  });
});
