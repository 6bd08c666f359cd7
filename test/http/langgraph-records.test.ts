import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import { graph as echo } from "../../demo/graphs/echo.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// What LangGraph's server records of a run, chat-serve records too: the assistant's own id (the
// graph's system assistant's uuid when the client named the graph), the run's metadata over its
// thread's, its kwargs; and in each checkpoint's metadata and each event's, the run's, graph's
// and assistant's ids and the run's attempt.

let server: TestServer;
let client: Client;
before(async () => {
  server = await startTestServer({ echo: { graph: echo, description: "Echo", streamableNodeNames: ["respond"] } }, { langgraph: true });
  client = new Client({ apiUrl: server.origin });
});
after(() => server.close());

test("a run, its checkpoints and its events carry the ids LangGraph's server writes", async () => {
  const [system] = await client.assistants.search({ graphId: "echo" });
  assert.ok(system !== undefined);
  const thread = await client.threads.create({ metadata: { project: "records" } });
  const input = { messages: [{ role: "user", content: "hi" }] };
  const run = await client.runs.create(thread.thread_id, "echo", { input, metadata: { from: "test" } });
  assert.equal(run.assistant_id, system.assistant_id, "the system assistant's uuid, not the graph id");
  await client.runs.join(thread.thread_id, run.run_id);
  const recorded = (await client.runs.get(thread.thread_id, run.run_id)) as typeof run & { kwargs: Record<string, any> };
  assert.deepEqual(recorded.metadata, { project: "records", graph_id: "echo", assistant_id: system.assistant_id, from: "test" });
  assert.deepEqual(recorded.kwargs.input, input);
  assert.equal(recorded.kwargs.config.configurable.graph_id, "echo");
  assert.equal(recorded.kwargs.config.configurable.assistant_id, system.assistant_id);
  assert.equal(recorded.kwargs.config.configurable.run_id, run.run_id);
  assert.deepEqual(recorded.kwargs.stream_mode, ["values"]);

  const [latest] = await client.threads.getHistory(thread.thread_id, { limit: 1 });
  const metadata = latest?.metadata as Record<string, unknown>;
  assert.equal(metadata.run_id, run.run_id);
  assert.equal(metadata.graph_id, "echo");
  assert.equal(metadata.assistant_id, system.assistant_id);
  assert.equal(metadata.run_attempt, 1);
  assert.equal(metadata.source, "loop");

  let eventMetadata: Record<string, unknown> | undefined;
  for await (const part of client.runs.stream(thread.thread_id, "echo", { input, streamMode: "messages-tuple" })) {
    if (part.event === "messages") eventMetadata ??= (part.data as [unknown, Record<string, unknown>])[1];
  }
  assert.equal(eventMetadata?.assistant_id, system.assistant_id);
  assert.equal(eventMetadata?.graph_id, "echo");
});
