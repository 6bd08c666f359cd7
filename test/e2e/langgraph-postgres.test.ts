import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import { type RunningServer, startCli } from "../helpers/cli.js";
import { eventually } from "../helpers/eventually.js";
import {
  cleanupsAfterAll,
  dropSchema,
  POSTGRES_URL,
  REDIS_URL,
  requireRedisAndPostgres,
  uniquePrefix,
  uniqueSchema,
} from "../helpers/services.js";
import { tempProject } from "../helpers/temp-project.js";

// The Agent Protocol on two `chat-serve start` processes sharing Postgres (checkpoints, the
// threads and runs, LangGraph's store) and a Redis coordinator: what one process makes, the
// other reads and continues; an interrupt paused on one is answered on the other; one run per
// thread holds across them; and a restart forgets nothing. Runs created in the background go
// on the shared queue: joined (and their events streamed) from either process, cancelled from
// either, and taken over by another process when the one running them is killed.

const skip = await requireRedisAndPostgres();
const cleanups = cleanupsAfterAll();

const GRAPHS = `
import { AIMessage } from "@langchain/core/messages";
import { END, interrupt, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { setTimeout as sleep } from "node:timers/promises";
const said = (messages) => messages.filter((m) => m.getType() === "human").map((m) => m.text).join(" | ");
export const recall = new StateGraph(MessagesAnnotation)
  .addNode("respond", async (state, config) => {
    const item = await config.store?.get(["notes"], "motto");
    return { messages: [new AIMessage("I remember: " + said(state.messages) + (item ? " (motto: " + item.value.text + ")" : ""))] };
  })
  .addEdge(START, "respond").addEdge("respond", END).compile();
export const ask = new StateGraph(MessagesAnnotation)
  .addNode("ask", () => ({ messages: [new AIMessage("You answered: " + interrupt({ question: "Go on?" }))] }))
  .addEdge(START, "ask").addEdge("ask", END).compile();
export const slow = new StateGraph(MessagesAnnotation)
  .addNode("wait", async (_state, config) => { await sleep(1500, undefined, { signal: config.signal }); return { messages: [new AIMessage("done")] }; })
  .addEdge(START, "wait").addEdge("wait", END).compile();
`;

const user = (content: string) => ({ messages: [{ role: "user", content }] });
const lastText = (values: unknown) => (values as { messages: { content: string }[] }).messages.at(-1)?.content;

describe("the Agent Protocol on two processes over Postgres and Redis", { skip, timeout: 120_000 }, () => {
  test("threads, runs, interrupts and the store are shared; one run per thread holds across processes; a restart forgets nothing", async () => {
    const schema = uniqueSchema();
    const project = tempProject({
      "chat-serve.config.ts": `export default {
  checkpointer: { kind: "postgres", url: ${JSON.stringify(POSTGRES_URL)}, schema: ${JSON.stringify(schema)} },
  coordinator: { kind: "redis", url: ${JSON.stringify(REDIS_URL)}, keyPrefix: ${JSON.stringify(uniquePrefix())} },
  background: { keyPrefix: ${JSON.stringify(`cs-bg-${schema}`)} },
  graphs: {
    recall: { graph: "./graphs.ts:recall", description: "remembers" },
    ask: { graph: "./graphs.ts:ask", description: "asks first", features: ["INTERRUPTS"] },
    slow: { graph: "./graphs.ts:slow", description: "takes its time" },
  },
};`,
      "graphs.ts": GRAPHS,
    });
    cleanups.push(project.cleanup, () => dropSchema(schema));
    const servers: RunningServer[] = [];
    const start = async () => {
      const server = await startCli([], { cwd: project.dir });
      cleanups.push(() => void server.stop("SIGKILL"));
      return server;
    };
    servers.push(await start(), await start());
    const [a, b] = servers.map((server) => new Client({ apiUrl: new URL(server.baseURL).origin })) as [Client, Client];

    await a.store.putItem(["notes"], "motto", { text: "carpe diem" });
    const thread = await a.threads.create({ metadata: { owner: "ann" } });
    await a.runs.wait(thread.thread_id, "recall", { input: user("first") });
    const onB = await b.runs.wait(thread.thread_id, "recall", { input: user("second") });
    assert.equal(lastText(onB), "I remember: first | second (motto: carpe diem)");
    assert.equal((await b.threads.get(thread.thread_id)).metadata?.owner, "ann");
    assert.equal((await b.runs.list(thread.thread_id)).length, 2);

    const asking = await a.threads.create();
    await a.runs.wait(asking.thread_id, "ask", { input: user("go") });
    assert.equal((await b.threads.get(asking.thread_id)).status, "interrupted");
    assert.equal(lastText(await b.runs.wait(asking.thread_id, "ask", { command: { resume: "yes" } })), "You answered: yes");

    const busy = await a.threads.create();
    const running = await a.runs.create(busy.thread_id, "slow", { input: user("wait") });
    await assert.rejects(b.runs.create(busy.thread_id, "slow", { input: user("me too") }), /409/u);
    // 20 concurrent runs with reject on one thread, across both processes: exactly one is made.
    const contested = await a.threads.create();
    const attempts = await Promise.allSettled(
      Array.from({ length: 20 }, (_unused, index) =>
        [a, b][index % 2]!.runs.create(contested.thread_id, "slow", { input: user(`${index}`) }),
      ),
    );
    assert.equal(attempts.filter((attempt) => attempt.status === "fulfilled").length, 1, JSON.stringify(attempts.map((x) => x.status)));
    assert.equal((await b.runs.list(contested.thread_id)).length, 1);
    // A run streaming to a client of one process is a run of the shared queue: joined from the other.
    const streaming = await a.threads.create();
    const events = a.runs.stream(streaming.thread_id, "slow", { input: user("stream") });
    const first = await events[Symbol.asyncIterator]().next();
    assert.equal((first.value as { event: string }).event, "metadata");
    const streamingRun = (first.value as { data: { run_id: string } }).data.run_id;
    // A join on the other process waits for the run to end.
    assert.equal(lastText(await b.runs.join(busy.thread_id, running.run_id)), "done");
    assert.equal(lastText(await b.runs.join(streaming.thread_id, streamingRun)), "done");
    // …and cancelled from it: the stream on the first process ends with the run.
    const stopped = await a.threads.create();
    const stopping = a.runs.stream(stopped.thread_id, "slow", { input: user("stop") })[Symbol.asyncIterator]();
    const started = (await stopping.next()).value as { data: { run_id: string } };
    await b.runs.cancel(stopped.thread_id, started.data.run_id, true);
    while (!(await stopping.next()).done);
    assert.equal((await a.runs.get(stopped.thread_id, started.data.run_id)).status, "interrupted");

    await servers[0]!.stop();
    const restarted = new Client({ apiUrl: new URL((await start()).baseURL).origin });
    assert.equal(lastText((await restarted.threads.get(thread.thread_id)).values), "I remember: first | second (motto: carpe diem)");
    assert.deepEqual(
      (await restarted.threads.search({ metadata: { owner: "ann" } })).map((found) => found.thread_id),
      [thread.thread_id],
    );
    assert.deepEqual((await restarted.store.getItem(["notes"], "motto"))?.value, { text: "carpe diem" });
  });
});

describe("the Agent Protocol's background runs on the shared queue", { skip, timeout: 120_000 }, () => {
  test("joined and streamed from another process, cancelled from another, taken over after a kill -9", async () => {
    const schema = uniqueSchema();
    const project = tempProject({
      "chat-serve.config.ts": `export default {
  checkpointer: { kind: "postgres", url: ${JSON.stringify(POSTGRES_URL)}, schema: ${JSON.stringify(schema)} },
  coordinator: { kind: "redis", url: ${JSON.stringify(REDIS_URL)}, keyPrefix: ${JSON.stringify(uniquePrefix())} },
  background: { keyPrefix: ${JSON.stringify(`cs-bg-${schema}`)}, takeoverAfter: "2s" },
  graphs: { slow: { graph: "./graphs.ts:slow", description: "takes its time" } },
};`,
      "graphs.ts": GRAPHS,
    });
    cleanups.push(project.cleanup, () => dropSchema(schema));
    const start = async () => {
      const server = await startCli([], { cwd: project.dir });
      cleanups.push(() => void server.stop("SIGKILL"));
      return server;
    };
    const [one, two] = [await start(), await start()];
    const [a, b] = [one, two].map((server) => new Client({ apiUrl: new URL(server.baseURL).origin })) as [Client, Client];

    // Streamed from the other process, from its first event (Last-Event-ID -1), to its end.
    const thread = await a.threads.create();
    const run = await a.runs.create(thread.thread_id, "slow", { input: user("wait"), streamMode: ["values"] });
    const seen: { event: string; data: unknown }[] = [];
    for await (const part of b.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: "-1" })) seen.push(part);
    assert.deepEqual(
      seen.map((part) => part.event),
      ["metadata", "values", "values"],
    );
    assert.equal(lastText(seen.at(-1)?.data), "done");
    assert.equal((await b.runs.get(thread.thread_id, run.run_id)).status, "success");
    assert.equal((await b.threads.get(thread.thread_id)).status, "idle");

    // Cancelled from the process that did not create it, whichever runs it.
    const cancelled = await a.runs.create(thread.thread_id, "slow", { input: user("stop me") });
    await b.runs.cancel(thread.thread_id, cancelled.run_id, true);
    assert.equal((await a.runs.get(thread.thread_id, cancelled.run_id)).status, "interrupted");
    assert.equal((await a.threads.get(thread.thread_id)).status, "idle");

    // Both processes killed while it runs: a third takes it over and finishes it.
    const orphan = await b.runs.create(thread.thread_id, "slow", { input: user("survive") });
    await eventually(
      async () => {
        assert.equal((await a.runs.get(thread.thread_id, orphan.run_id)).status, "running", "the run has started");
      },
      10_000,
      50,
    );
    await Promise.all([one.stop("SIGKILL"), two.stop("SIGKILL")]);
    const c = new Client({ apiUrl: new URL((await start()).baseURL).origin });
    assert.equal(lastText(await c.runs.join(thread.thread_id, orphan.run_id)), "done");
    assert.equal((await c.runs.get(thread.thread_id, orphan.run_id)).status, "success");
    assert.equal((await c.threads.get(thread.thread_id)).status, "idle");
  });
});

describe("the Agent Protocol's streamed runs on the shared queue", { skip, timeout: 120_000 }, () => {
  test("the replica running a streamed run is killed: another finishes it from its last step, the client reconnects through a third", async () => {
    const schema = uniqueSchema();
    const counter = `${uniquePrefix()}steps`;
    const project = tempProject({
      "chat-serve.config.ts": `export default {
  checkpointer: { kind: "postgres", url: ${JSON.stringify(POSTGRES_URL)}, schema: ${JSON.stringify(schema)} },
  coordinator: { kind: "redis", url: ${JSON.stringify(REDIS_URL)}, keyPrefix: ${JSON.stringify(uniquePrefix())}, leaseTtlMs: 1500 },
  background: { keyPrefix: ${JSON.stringify(`cs-bg-${schema}`)}, takeoverAfter: "2s" },
  graphs: { steps: { graph: "./steps.ts:steps", description: "three steps" } },
};`,
      // Three steps; each counts its runs and says which process ran it, in Redis.
      "steps.ts": `
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { Redis } from "ioredis";
import { setTimeout as sleep } from "node:timers/promises";
const redis = new Redis(${JSON.stringify(REDIS_URL)});
const step = (name) => async (_state, config) => {
  await redis.set(${JSON.stringify(counter)} + ":pid", String(process.pid));
  await redis.set(${JSON.stringify(counter)} + ":current", name);
  await sleep(900, undefined, { signal: config.signal });
  await redis.incr(${JSON.stringify(counter)} + ":" + name);
  return { messages: [new AIMessage(name + " done")] };
};
export const steps = new StateGraph(MessagesAnnotation)
  .addNode("one", step("one")).addNode("two", step("two")).addNode("three", step("three"))
  .addEdge(START, "one").addEdge("one", "two").addEdge("two", "three").addEdge("three", END).compile();
`,
    });
    cleanups.push(project.cleanup, () => dropSchema(schema));
    const { Redis } = await import("ioredis");
    const redis = new Redis(REDIS_URL);
    cleanups.push(() => void redis.disconnect());
    const servers: RunningServer[] = [];
    for (let index = 0; index < 3; index += 1) {
      const server = await startCli([], { cwd: project.dir });
      cleanups.push(() => void server.stop("SIGKILL"));
      servers.push(server);
    }
    const clients = servers.map((server) => new Client({ apiUrl: new URL(server.baseURL).origin }));
    const thread = await clients[0]!.threads.create();
    const seen: { id?: string; event: string; data: unknown }[] = [];
    const stream = clients[0]!.runs.stream(thread.thread_id, "steps", {
      input: user("go"),
      streamMode: ["updates"],
      streamResumable: true,
    });
    let runId = "";
    const iterator = stream[Symbol.asyncIterator]();
    for (;;) {
      const part = (await iterator.next()).value as { id?: string; event: string; data: { run_id?: string; one?: unknown } };
      seen.push(part);
      if (part.event === "metadata") runId = String(part.data.run_id);
      if (part.event === "updates" && part.data.one !== undefined) break;
    }
    // Step one is done and step two has begun: kill the process running the run (and the one
    // streaming it, if another).
    await eventually(async () => assert.equal(await redis.get(`${counter}:current`), "two"), 5_000, 20);
    const pid = Number(await redis.get(`${counter}:pid`));
    const victims = servers.filter((server) => server.child.pid === pid || server === servers[0]);
    await Promise.all(victims.map((server) => server.stop("SIGKILL")));
    const survivor = clients[servers.findIndex((server) => !victims.includes(server))]!;
    // The client reconnects through a replica still up, from the last event it saw.
    const lastId = seen.at(-1)?.id;
    assert.ok(lastId !== undefined, "resumable streams carry event ids");
    for await (const part of survivor.runs.joinStream(thread.thread_id, runId, { lastEventId: lastId })) seen.push(part);
    const updates = seen.filter((part) => part.event === "updates").map((part) => Object.keys(part.data as object)[0]);
    assert.deepEqual(updates, ["one", "two", "three"]);
    assert.equal((await survivor.runs.get(thread.thread_id, runId)).status, "success");
    // No completed step ran twice (the step running at the kill may have).
    assert.equal(await redis.get(`${counter}:one`), "1");
    assert.equal(await redis.get(`${counter}:three`), "1");
  });
});
