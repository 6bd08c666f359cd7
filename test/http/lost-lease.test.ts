import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { MemorySaver } from "@langchain/langgraph";
import OpenAI from "openai";
import { ChatServe } from "../../src/app/chat-serve.js";
import { once, type RunCoordinator, type RunLease } from "../../src/coordination/run-coordinator.js";
import { GraphRegistry } from "../../src/registry/graph-registry.js";
import { checkpointKey } from "../../src/runs/interrupts/checkpoint-key.js";
import { counterGraph } from "../fixtures/interrupt-graphs.js";
import { answerBatch } from "../helpers/resume.js";

/** A coordinator whose leases the test can take away, as a Redis renewal failure would. */
class LosableCoordinator implements RunCoordinator {
  readonly controllers: AbortController[] = [];
  async tryAcquire(key: string): Promise<RunLease> {
    const controller = new AbortController();
    this.controllers.push(controller);
    return { key, signal: controller.signal, release: once(async () => {}) };
  }
}

test("a run whose lease is lost is stopped with 503 backend_unavailable, and its checkpoint is left alone", async () => {
  const coordinator = new LosableCoordinator();
  const saver = new MemorySaver();
  const counter = { before: 0, after: 0 };
  const registry = new GraphRegistry(
    { slow: { graph: counterGraph(counter, { afterDelayMs: 2_000 }), description: "x", features: ["INTERRUPTS"] } },
    { runCoordinator: coordinator, checkpointer: saver },
  );
  const app = await new ChatServe({ graphs: registry }).bind();
  const origin = await app.listen({ host: "127.0.0.1", port: 0 });
  try {
    const client = new OpenAI({ baseURL: `${origin}/v1`, apiKey: "x", maxRetries: 0 });
    const history: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: "user", content: "go" }];
    const paused = await client.chat.completions.create({ model: "slow", messages: history });
    const calls = paused.choices[0]!.message.tool_calls!;
    const runId = JSON.parse((calls[0] as { function: { arguments: string } }).function.arguments).run_id as string;
    const resumed = client.chat.completions.create({
      model: "slow",
      messages: answerBatch(history, calls, "yes"),
    });
    await sleep(300);
    coordinator.controllers.at(-1)!.abort(new Error("lease lost"));
    await assert.rejects(resumed, (error: InstanceType<typeof OpenAI.APIError>) => {
      assert.equal(error.status, 503);
      assert.equal(error.code, "backend_unavailable");
      return true;
    });
    assert.ok(await saver.getTuple({ configurable: { thread_id: checkpointKey("default", "slow", runId) } }), "not deleted");
  } finally {
    await app.close();
  }
});
