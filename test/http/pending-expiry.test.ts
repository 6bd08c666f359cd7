import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { MemorySaver } from "@langchain/langgraph";
import OpenAI from "openai";
import { ChatServe } from "../../src/app/chat-serve.js";
import { InMemoryRunCoordinator } from "../../src/coordination/in-memory-run-coordinator.js";
import { GraphRegistry } from "../../src/registry/graph-registry.js";
import { PendingRunSweeper, SWEEP_LEASE_KEY } from "../../src/server/pending-run-sweeper.js";
import { type Counter, counterGraph } from "../fixtures/interrupt-graphs.js";
import { answerBatch } from "../helpers/resume.js";

type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type ToolCall = OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;

const coordinator = new InMemoryRunCoordinator();
const saver = new MemorySaver();
const counter: Counter = { before: 0, after: 0 };
const registry = new GraphRegistry(
  { counter: { graph: counterGraph(counter), description: "Counter", features: ["INTERRUPTS"] } },
  { runCoordinator: coordinator, checkpointer: saver },
);
const sweeper = new PendingRunSweeper({
  pendingRuns: registry.pendingRuns,
  coordinator,
  checkpointer: saver,
  expireAfterMs: 200,
  sweepEveryMs: 60_000,
});
let serve: ChatServe;
let client: OpenAI;

before(async () => {
  serve = new ChatServe({ graphs: registry });
  const app = await serve.bind({ prefix: "/v1" });
  client = new OpenAI({ baseURL: `${await app.listen({ host: "127.0.0.1", port: 0 })}/v1`, apiKey: "unused", maxRetries: 0 });
});
after(async () => {
  await sweeper.stop();
  await serve.app.close();
});

async function pause(text: string): Promise<{ history: Message[]; calls: ToolCall[] }> {
  const history: Message[] = [{ role: "user", content: text }];
  const paused = await client.chat.completions.create({ model: "counter", messages: history });
  return { history, calls: paused.choices[0]!.message.tool_calls as ToolCall[] };
}

test("a sweep expires the runs idle for longer than expireAfter and leaves the fresh ones; a late resume is told it expired", async () => {
  const old = await pause("old");
  await sleep(300);
  const fresh = await pause("fresh");
  const results = await sweeper.sweep();
  assert.deepEqual(
    results?.map(({ entry, outcome }) => [entry.runId, outcome]),
    [[JSON.parse(old.calls[0]!.function.arguments).run_id, "expired"]],
  );
  assert.equal(await registry.pendingRuns.count(), 1, "the fresh run is still pending");
  await assert.rejects(
    client.chat.completions.create({ model: "counter", messages: answerBatch(old.history, old.calls, JSON.stringify({ resume: "yes" })) }),
    (error: InstanceType<typeof OpenAI.APIError>) => {
      assert.equal(error.status, 409);
      assert.equal(error.code, "interrupt_state_conflict");
      assert.match(error.message, /This run expired: it waited for an answer longer than this server keeps pending runs/u);
      return true;
    },
  );
  const done = await client.chat.completions.create({
    model: "counter",
    messages: answerBatch(fresh.history, fresh.calls, JSON.stringify({ resume: "yes" })),
  });
  assert.equal(done.choices[0]?.finish_reason, "stop");

  // Many expiry periods later (sweeps in between), a client that comes back still hears "expired".
  for (let sweep = 1; sweep <= 3; sweep += 1) await sweeper.sweep(new Date(Date.now() + sweep * 10 * 200));
  await assert.rejects(
    client.chat.completions.create({ model: "counter", messages: answerBatch(old.history, old.calls, JSON.stringify({ resume: "yes" })) }),
    (error: InstanceType<typeof OpenAI.APIError>) => {
      assert.match(error.message, /This run expired/u);
      return true;
    },
  );
});

test("only one sweep at a time: a sweep whose lease another holds does nothing", async () => {
  await pause("held");
  await sleep(300);
  const lease = await coordinator.tryAcquire(SWEEP_LEASE_KEY);
  try {
    assert.equal(await sweeper.sweep(), undefined);
    assert.equal(await registry.pendingRuns.count(), 1);
  } finally {
    await lease!.release();
  }
  assert.equal((await sweeper.sweep())?.length, 1);
  assert.equal(await registry.pendingRuns.count(), 0);
});

test("the timer sweeps by itself and stops cleanly", async () => {
  const ticking = new PendingRunSweeper({
    pendingRuns: registry.pendingRuns,
    coordinator,
    checkpointer: saver,
    expireAfterMs: 100,
    sweepEveryMs: 50,
  });
  await pause("left alone");
  ticking.start();
  try {
    for (let wait = 0; wait < 40 && (await registry.pendingRuns.count()) > 0; wait += 1) await sleep(25);
    assert.equal(await registry.pendingRuns.count(), 0);
  } finally {
    await ticking.stop();
  }
});
