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
    // A run streaming to a client of one process is cancelled there only.
    const streaming = await a.threads.create();
    const events = a.runs.stream(streaming.thread_id, "slow", { input: user("stream") });
    const first = await events[Symbol.asyncIterator]().next();
    assert.equal((first.value as { event: string }).event, "metadata");
    const streamingRun = (first.value as { data: { run_id: string } }).data.run_id;
    await assert.rejects(b.runs.cancel(streaming.thread_id, streamingRun), /409/u);
    // A join on the other process waits for the run to end.
    assert.equal(lastText(await b.runs.join(busy.thread_id, running.run_id)), "done");
    assert.equal(lastText(await b.runs.join(streaming.thread_id, streamingRun)), "done");

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
