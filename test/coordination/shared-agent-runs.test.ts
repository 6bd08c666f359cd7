import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { AIMessage } from "@langchain/core/messages";
import { v7 as uuid7 } from "@langchain/core/utils/uuid";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { BackgroundRuns } from "../../src/background/background-runs.js";
import { BullmqQueue } from "../../src/background/bullmq-queue.js";
import { MemoryEventLog } from "../../src/background/event-log.js";
import { GraphRegistry } from "../../src/registry/graph-registry.js";
import type { AgentRunRequest } from "../../src/runs/agent/agent-run-config.js";
import { AgentRuns } from "../../src/runs/agent/agent-runs.js";
import { RunTracker } from "../../src/runs/run-tracker.js";
import { eventually } from "../helpers/eventually.js";
import { REDIS_URL, requireRedis } from "../helpers/services.js";

// The Agent Protocol's background runs on the shared queue, seen from a process that does not
// work it: its runs are queued from there, worked by the other "process" (a BullMQ worker of
// its own), followed from the shared event log, joined by their records and cancelled through
// the queue's cancel channel. Both sides share the registry (records, checkpointer) as two
// hosts share Postgres.

const { skip } = await requireRedis();

const STEP_MS = 150;
function slowGraph() {
  const step = (name: string) => async (_state: unknown, config: { signal?: AbortSignal }) => {
    await sleep(STEP_MS, undefined, { signal: config.signal });
    return { messages: [new AIMessage(`${name} done`)] };
  };
  return new StateGraph(MessagesAnnotation)
    .addNode("one", step("one"))
    .addNode("two", step("two"))
    .addEdge(START, "one")
    .addEdge("one", "two")
    .addEdge("two", END)
    .compile();
}

const request = (text: string): AgentRunRequest => ({
  assistantId: "slow",
  input: { messages: [{ role: "user", content: text }] },
  streamMode: ["values"],
  subgraphs: false,
  config: {},
  metadata: {},
  multitaskStrategy: "reject",
  ifNotExists: "create",
  onCompletion: "keep",
});

describe("Agent Protocol runs on the shared queue, from a process that does not work it", { skip, timeout: 60_000 }, () => {
  const keyPrefix = `cs-agent-${randomUUID()}`;
  const registry = new GraphRegistry({ slow: { graph: slowGraph(), description: "two slow steps", threads: true } });
  const worker = new BullmqQueue({ url: REDIS_URL, keyPrefix, takeoverAfterMs: 2_000, timeoutMs: 2_000 });
  const front = new BullmqQueue({ url: REDIS_URL, keyPrefix, takeoverAfterMs: 2_000, timeoutMs: 2_000 });
  const tracker = new RunTracker();
  // The worker side: its engine is made for the queued runs it takes (no surface here).
  const background = new BackgroundRuns({
    registry,
    queue: worker,
    events: new MemoryEventLog(),
    agentEvents: worker.agentEvents,
    protocolLogs: worker.protocolLogs,
    runs: tracker,
    backendTimeoutMs: 2_000,
    concurrency: 2,
  });
  background.start();
  const runs = new AgentRuns({
    registry,
    records: registry.store.agentRecords,
    tracker: new RunTracker(),
    backendTimeoutMs: 2_000,
    shared: { queue: front, events: front.agentEvents, protocolLogs: front.protocolLogs },
  });
  after(async () => {
    await runs.close();
    await background.close();
    await front.close();
  });

  test("queued here, worked there: followed from the shared log, joined, cancelled with rollback; nothing left open", async () => {
    const threadId = uuid7();
    const run = await runs.startInBackground("default", threadId, request("follow"));
    assert.equal(run.status, "pending");
    assert.equal(runs.live("default", threadId, run.run_id), undefined, "the run is not this process's");
    // Followed from before it started: the follower waits for its log.
    const followed = await runs.sharedEvents(run, -1);
    assert.ok(followed !== undefined, "a queued run can be followed");
    const events: string[] = [];
    for await (const event of followed.follow(followed.after)) events.push(event.event);
    assert.deepEqual(events, ["metadata", "values", "values", "values"]);
    await runs.awaitElsewhere("default", run.run_id, new AbortController().signal);
    assert.equal((await registry.store.agentRecords.getRun("default", run.run_id))?.status, "success");

    // A second run of the thread, refused while the first one's record says it runs.
    const second = await runs.startInBackground("default", threadId, request("cancel me"));
    await assert.rejects(runs.startInBackground("default", threadId, request("refused")), /already running a run/u);
    await eventually(
      async () => {
        assert.equal((await registry.store.agentRecords.getRun("default", second.run_id))?.status, "running", "the run has started");
      },
      5_000,
      20,
    );
    await runs.cancel("default", threadId, second.run_id, { wait: true, action: "rollback" });
    assert.equal(await registry.store.agentRecords.getRun("default", second.run_id), undefined, "a rollback deletes the run");
    assert.equal((await registry.store.agentRecords.getThread("default", threadId))?.status, "idle");

    assert.equal(front.agentEvents.followers, 0, "no follower connection is left");
    assert.equal(worker.agentEvents.followers, 0);
    assert.equal(tracker.size, 0, "no run is left in flight on the worker");
  });
});

describe("a cron's firing taken by a process without the Agent Protocol", { skip, timeout: 30_000 }, () => {
  test("goes back to the queue and is fired by a process with it, once", async () => {
    const keyPrefix = `cs-cron-${randomUUID()}`;
    const registry = new GraphRegistry({ slow: { graph: slowGraph(), description: "two slow steps", threads: true } });
    const options = { url: REDIS_URL, keyPrefix, takeoverAfterMs: 2_000, timeoutMs: 2_000 };
    const [workerQueue, serverQueue] = [new BullmqQueue(options), new BullmqQueue(options)];
    const common = { registry, events: new MemoryEventLog(), backendTimeoutMs: 2_000, concurrency: 1 };
    // The worker: no handler for crons (`chat-serve worker`), working the queue alone at first.
    const worker = new BackgroundRuns({ ...common, queue: workerQueue, runs: new RunTracker() });
    worker.start();
    const cronId = randomUUID();
    await serverQueue.schedule(cronId, { pattern: "* * * * * *" }, { kind: "agent-cron", cronId, scope: "default" });
    // Firings come due while only the worker is there; then the schedule ends.
    await sleep(1_500);
    await serverQueue.unschedule(cronId);
    const fired: string[] = [];
    const server = new BackgroundRuns({ ...common, queue: serverQueue, runs: new RunTracker() });
    server.handleAgentCrons(async (job) => {
      fired.push(job.cronId);
    });
    server.start();
    try {
      await eventually(async () => assert.ok(fired.length >= 1, "no firing reached the server"), 8_000);
      await sleep(1_500);
      // One firing a second at most: none made twice by going back and forth.
      assert.ok(fired.length <= 2, `${fired.length} firings in 1.5 s of a cron firing every second`);
      assert.ok(fired.every((id) => id === cronId));
    } finally {
      await serverQueue.unschedule(cronId);
      await worker.close();
      await server.close();
    }
  });
});
