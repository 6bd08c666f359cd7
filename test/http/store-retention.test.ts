import assert from "node:assert/strict";
import { test } from "node:test";
import { MemorySaver } from "@langchain/langgraph";
import OpenAI from "openai";
import { ChatServe } from "../../src/app/chat-serve.js";
import { InMemoryRunCoordinator } from "../../src/coordination/in-memory-run-coordinator.js";
import { GraphRegistry } from "../../src/registry/graph-registry.js";
import { StoreSweeper } from "../../src/server/store-sweeper.js";
import { recallGraph, threadCount } from "../helpers/recall-graphs.js";

// Retention: what was last used longer ago than expireAfter is swept, with the checkpoints of
// the threads nothing refers to any more; one sweep at a time (it takes a lease).

const DAY = 24 * 60 * 60 * 1000;
const threads = threadCount;

test("a sweep deletes responses, conversations and sessions unused for longer than expireAfter, and their threads", async () => {
  const saver = new MemorySaver();
  const graph = recallGraph(saver);
  const registry = new GraphRegistry({ stateful: { graph, description: "stateful" } });
  const serve = new ChatServe({ graphs: registry });
  const app = await serve.bind({ prefix: "/v1" });
  const origin = await app.listen({ host: "127.0.0.1", port: 0 });
  const coordinator = new InMemoryRunCoordinator();
  const sweeper = new StoreSweeper({
    store: registry.store,
    coordinator,
    deleteThread: (name, threadId) => registry.deleteThread(name, threadId),
    expireAfterMs: 30 * DAY,
    sweepEveryMs: 60_000,
    timeoutMs: 2_000,
  });
  try {
    const client = new OpenAI({ baseURL: `${origin}/v1`, apiKey: "x", maxRetries: 0 });
    const response = await client.responses.create({ model: "stateful", input: "a" });
    const conversation = await client.conversations.create({});
    await client.responses.create({ model: "stateful", conversation: conversation.id, input: "b" });
    await client.chat.completions.create({ model: "stateful", messages: [{ role: "user", content: "c" }], metadata: { session_id: "s" } });
    assert.equal(threads(saver), 3);

    const early = await sweeper.sweep(new Date(Date.now() + 29 * DAY));
    assert.deepEqual(early, { responses: 0, conversations: 0, sessions: 0, threads: [] }, "nothing is 30 days old yet");
    // Another process sweeping: this one leaves it.
    const held = await coordinator.tryAcquire("chat-serve:store-sweep");
    assert.equal(await sweeper.sweep(new Date(Date.now() + 31 * DAY)), undefined);
    await held!.release();

    const swept = await sweeper.sweep(new Date(Date.now() + 31 * DAY));
    assert.equal(swept?.responses, 2);
    assert.equal(swept?.conversations, 1);
    assert.equal(swept?.sessions, 1);
    assert.equal(swept?.threads.length, 3);
    assert.equal(threads(saver), 0, "the threads' checkpoints went with them");
    await assert.rejects(client.responses.retrieve(response.id), (error: InstanceType<typeof OpenAI.APIError>) => error.status === 404);
    await assert.rejects(
      client.conversations.retrieve(conversation.id),
      (error: InstanceType<typeof OpenAI.APIError>) => error.status === 404,
    );
    assert.equal(coordinator.size, 0, "the sweep released its lease");
  } finally {
    await sweeper.stop();
    await app.close();
  }
});
