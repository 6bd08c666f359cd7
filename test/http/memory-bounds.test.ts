import assert from "node:assert/strict";
import { test } from "node:test";
import { MemorySaver } from "@langchain/langgraph";
import OpenAI from "openai";
import { ChatServe } from "../../src/app/chat-serve.js";
import { InMemoryRunCoordinator } from "../../src/coordination/in-memory-run-coordinator.js";
import { MemoryPendingRunIndex } from "../../src/coordination/pending-run-index.js";
import { GraphRegistry } from "../../src/registry/graph-registry.js";
import { MemoryConversationStore } from "../../src/store/memory-conversation-store.js";
import { type Counter, counterGraph } from "../fixtures/interrupt-graphs.js";
import { recallGraph, threadCount } from "../helpers/recall-graphs.js";
import { answerBatch } from "../helpers/resume.js";

// The embedded backends are bounded: past their caps the least recently used paused runs,
// responses and sessions go, and the in-memory checkpointer forgets their threads with them.

const threads = threadCount;

async function serve(registry: GraphRegistry) {
  const serve = new ChatServe({ graphs: registry });
  const app = await serve.bind({ prefix: "/v1" });
  const origin = await app.listen({ host: "127.0.0.1", port: 0 });
  return { client: new OpenAI({ baseURL: `${origin}/v1`, apiKey: "x", maxRetries: 0 }), close: () => app.close() };
}

test("paused runs past the cap: the least recently active is expired, its checkpoint deleted, and a late resume told so", async () => {
  const saver = new MemorySaver();
  const counter: Counter = { before: 0, after: 0 };
  const registry = new GraphRegistry(
    { counter: { graph: counterGraph(counter), description: "asks", features: ["INTERRUPTS"] } },
    {
      checkpointer: saver,
      runCoordinator: new InMemoryRunCoordinator(),
      pendingRuns: new MemoryPendingRunIndex(undefined, { maxPaused: 2 }),
    },
  );
  const { client, close } = await serve(registry);
  try {
    const history = [{ role: "user" as const, content: "go" }];
    const paused = [];
    for (let index = 0; index < 3; index += 1) paused.push(await client.chat.completions.create({ model: "counter", messages: history }));
    assert.equal(await registry.pendingRuns.count(), 2);
    assert.equal(threads(saver), 2, "the first run's checkpoint went with it");
    const calls = (completion: OpenAI.Chat.Completions.ChatCompletion) =>
      completion.choices[0]!.message.tool_calls as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall[];
    await assert.rejects(
      client.chat.completions.create({ model: "counter", messages: answerBatch(history, calls(paused[0]!), "yes") }),
      (error: InstanceType<typeof OpenAI.APIError>) => error.status === 409 && /This run expired/u.test(error.message),
    );
    const resumed = await client.chat.completions.create({ model: "counter", messages: answerBatch(history, calls(paused[2]!), "yes") });
    assert.equal(resumed.choices[0]!.finish_reason, "stop");
  } finally {
    await close();
  }
});

test("stored responses and sessions past the cap: the oldest go, and their threads leave the checkpointer at once", async () => {
  const saver = new MemorySaver();
  const graph = recallGraph(saver);
  const store = new MemoryConversationStore({ maxResponses: 2, maxSessions: 1 });
  const registry = new GraphRegistry({ stateful: { graph, description: "stateful" } }, { store });
  const { client, close } = await serve(registry);
  try {
    const made = [];
    for (let index = 0; index < 4; index += 1) made.push(await client.responses.create({ model: "stateful", input: `r${index}` }));
    assert.equal(store.size.responses, 2);
    assert.equal(threads(saver), 2, "two chains, two threads");
    await assert.rejects(client.responses.retrieve(made[0]!.id), (error: InstanceType<typeof OpenAI.APIError>) => error.status === 404);
    for (const session of ["a", "b"]) {
      await client.chat.completions.create({
        model: "stateful",
        messages: [{ role: "user", content: "hi" }],
        metadata: { session_id: session },
      });
    }
    assert.equal(store.size.sessions, 1);
    assert.equal(threads(saver), 3, "session a's thread went with it");
  } finally {
    await close();
  }
});
