import assert from "node:assert/strict";
import { test } from "node:test";
import { graph as echo } from "../../demo/graphs/echo.js";
import { GraphRegistry } from "../../src/registry/graph-registry.js";
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
