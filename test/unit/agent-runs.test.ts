import assert from "node:assert/strict";
import { test } from "node:test";
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { graph as echo } from "../../demo/graphs/echo.js";
import { GraphRegistry } from "../../src/registry/graph-registry.js";
import { checkpointThreadId, newRunRecord } from "../../src/runs/agent/agent-run-config.js";
import { AgentRuns } from "../../src/runs/agent/agent-runs.js";
import { RunEvents } from "../../src/runs/agent/run-events.js";
import { RunTracker } from "../../src/runs/run-tracker.js";
import { MemoryAgentRecords } from "../../src/store/agent-records.js";

const request = (content: string) => ({
  assistantId: "echo",
  input: { messages: [{ role: "user", content }] },
  streamMode: ["values" as const],
  subgraphs: false,
  config: {},
  metadata: {},
  multitaskStrategy: "reject" as const,
  ifNotExists: "reject" as const,
  onCompletion: "delete" as const,
});

test("ended runs keep their events for joins up to a count, the oldest forgotten first; nothing is left running", async () => {
  const tracker = new RunTracker();
  const runs = new AgentRuns({
    registry: new GraphRegistry({ echo: { graph: echo, description: "Echo", streamableNodeNames: ["respond"] } }),
    records: new MemoryAgentRecords(),
    tracker,
    backendTimeoutMs: 2_000,
    retainEventsOf: 2,
  });
  const started = [];
  for (const word of ["one", "two", "three"]) {
    const { run } = await runs.start("default", undefined, request(word));
    const live = runs.live("default", run.thread_id, run.run_id);
    assert.ok(live !== undefined);
    await runs.join(live);
    started.push(run);
  }
  assert.deepEqual(
    started.map((run) => runs.live("default", run.thread_id, run.run_id) !== undefined),
    [false, true, true],
  );
  assert.equal(tracker.size, 0);
  await runs.close();
});

test("a follower of a run's events leaves no listener on its signal, whichever way it ends", async () => {
  const events = new RunEvents();
  const controller = new AbortController();
  let listeners = 0;
  const add = controller.signal.addEventListener.bind(controller.signal);
  const remove = controller.signal.removeEventListener.bind(controller.signal);
  controller.signal.addEventListener = ((...args: Parameters<typeof add>) => {
    listeners += 1;
    add(...args);
  }) as typeof add;
  controller.signal.removeEventListener = ((...args: Parameters<typeof remove>) => {
    listeners -= 1;
    remove(...args);
  }) as typeof remove;
  events.push("metadata", { run_id: "r" });
  const seen: string[] = [];
  const following = (async () => {
    for await (const event of events.follow(-1, controller.signal)) seen.push(event.event);
  })();
  events.push("values", { a: 1 });
  events.finish();
  await following;
  assert.deepEqual(seen, ["metadata", "values"]);
  assert.equal(listeners, 0);
  // A follower whose client leaves mid-run.
  const open = new RunEvents();
  const early = (async () => {
    for await (const _event of open.follow(-1, controller.signal)) {
    }
  })();
  controller.abort();
  await early;
  assert.equal(listeners, 0);
});

test("a run taken over after its steps all ran, its end unrecorded, ends without running a step again", async () => {
  let ran = 0;
  const counted = new StateGraph(MessagesAnnotation)
    .addNode("answer", () => {
      ran += 1;
      return { messages: [new AIMessage("answered")] };
    })
    .addEdge(START, "answer")
    .addEdge("answer", END)
    .compile();
  const records = new MemoryAgentRecords();
  const tracker = new RunTracker();
  const runs = new AgentRuns({
    registry: new GraphRegistry({ counted: { graph: counted, description: "Counts its runs", threads: true } }),
    records,
    tracker,
    backendTimeoutMs: 2_000,
  });
  const asked = { ...request("hello"), assistantId: "counted", onCompletion: "keep" as const };
  const at = new Date().toISOString();
  const threadId = "thread-taken-over";
  await records.putThread({
    thread_id: threadId,
    scope: "default",
    graph_id: "counted",
    created_at: at,
    updated_at: at,
    state_updated_at: at,
    metadata: {},
    status: "busy",
  });
  // Its first worker recorded its start, ran every step, and went before recording its end.
  const run = {
    ...newRunRecord("default", threadId, asked, false, at, { model: "counted", assistantId: "counted" }),
    status: "running" as const,
    checkpoint_before: null,
  };
  await records.putRun(run);
  const { graph } = await runs.graphOf("counted");
  await (graph as unknown as typeof counted).invoke(asked.input, { configurable: { thread_id: checkpointThreadId("default", threadId) } });
  assert.equal(ran, 1);
  const job = { kind: "agent-run" as const, runId: run.run_id, threadId, scope: "default", request: { ...asked }, queuedAt: Date.now() };
  assert.equal(await runs.runJob(job, new AbortController().signal, 2), "done");
  assert.equal(ran, 1, "no step ran again");
  assert.equal((await records.getRun("default", run.run_id))?.status, "success");
  assert.equal((await records.getThread("default", threadId))?.status, "idle");
  assert.equal(tracker.size, 0);
  await runs.close();
});
