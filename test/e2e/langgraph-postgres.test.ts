import assert from "node:assert/strict";
import { before, describe, test } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import { type RunningServer, startCli } from "../helpers/cli.js";
import { eventually } from "../helpers/eventually.js";
import { requireHaproxy, startHaproxy } from "../helpers/load-balancer.js";
import { startReceiver } from "../helpers/loopback-receiver.js";
import { connectMcp, resultText } from "../helpers/mcp.js";
import { freePort } from "../helpers/private-redis.js";
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
const haproxy = requireHaproxy();
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
    // An item's own time to live (minutes): Postgres keeps it, for every process.
    await a.store.putItem(["notes"], "fleeting", { text: "soon gone" }, { ttl: 0.01 });
    assert.deepEqual((await b.store.getItem(["notes"], "fleeting"))?.value, { text: "soon gone" });
    const fleetingGone = eventually(() => assert.rejects(b.store.getItem(["notes"], "fleeting"), /404/u), 10_000).then(
      () => undefined,
      (error: unknown) => error,
    );
    const thread = await a.threads.create({ metadata: { owner: "ann" } });
    await a.runs.wait(thread.thread_id, "recall", { input: user("first") });
    const onB = await b.runs.wait(thread.thread_id, "recall", { input: user("second") });
    assert.equal(lastText(onB), "I remember: first | second (motto: carpe diem)");
    assert.equal((await b.threads.get(thread.thread_id)).metadata?.owner, "ann");
    assert.equal((await b.runs.list(thread.thread_id)).length, 2);

    // An assistant made on one process runs on the other (its config goes with the queued run).
    const made = await a.assistants.create({ graphId: "recall", name: "Recaller" });
    assert.equal((await b.assistants.get(made.assistant_id)).name, "Recaller");
    const viaAssistant = await b.threads.create();
    await b.runs.wait(viaAssistant.thread_id, made.assistant_id, { input: user("hi") });
    assert.equal((await a.threads.get(viaAssistant.thread_id)).metadata?.assistant_id, made.assistant_id);

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

    assert.equal(await fleetingGone, undefined);
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
    // A delayed run with a webhook waits in Redis: it outlives both processes, and a third runs it
    // once, due by the time the third starts: the surface's engine takes it (its webhook is sent).
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const later = await a.threads.create();
    const delayed = await a.runs.create(later.thread_id, "slow", {
      input: user("later"),
      afterSeconds: 1,
      webhook: `${receiver.url}/ended`,
    });
    assert.equal((await b.runs.get(later.thread_id, delayed.run_id)).status, "pending");
    // Killed at once, before it is due: no process of these two can have started it.

    await Promise.all([one.stop("SIGKILL"), two.stop("SIGKILL")]);
    const third = await start();
    const c = new Client({ apiUrl: new URL(third.baseURL).origin });
    assert.equal(lastText(await c.runs.join(thread.thread_id, orphan.run_id)), "done");
    assert.equal((await c.runs.get(thread.thread_id, orphan.run_id)).status, "success");
    assert.equal(lastText(await c.runs.join(later.thread_id, delayed.run_id)), "done");
    await eventually(async () => assert.equal(receiver.requests.length, 1, third.output().slice(-3000)), 10_000);
    assert.equal((JSON.parse(receiver.requests[0]!.body) as { run_id: string; status: string }).status, "success");
    assert.equal((await c.threads.get(thread.thread_id)).status, "idle");
  });
});

describe("the Agent Protocol's streamed runs on the shared queue, three replicas", { skip, timeout: 120_000 }, () => {
  const counter = `${uniquePrefix()}steps`;
  let project: ReturnType<typeof tempProject>;
  let redis: import("ioredis").Redis;
  const servers: RunningServer[] = [];
  const start = async () => {
    const server = await startCli([], { cwd: project.dir });
    cleanups.push(() => void server.stop("SIGKILL"));
    servers.push(server);
    return server;
  };
  /** The replicas up, as clients, with the server each is. */
  const up = () => servers.filter((server) => server.child.exitCode === null && server.child.signalCode === null);
  const client = (server: RunningServer) => new Client({ apiUrl: new URL(server.baseURL).origin });
  /** How often a step of a thread's run ran, and which process runs it now. */
  const count = async (threadId: string, name: string) => Number((await redis.get(`${counter}:${threadId}:${name}`)) ?? 0);
  const current = async (threadId: string) => ({
    step: await redis.get(`${counter}:${threadId}:current`),
    pid: Number(await redis.get(`${counter}:${threadId}:pid`)),
  });

  before(async () => {
    if (skip) return;
    const schema = uniqueSchema();
    project = tempProject({
      "chat-serve.config.ts": `export default {
  server: { shutdownGraceMs: 300 },
  checkpointer: { kind: "postgres", url: ${JSON.stringify(POSTGRES_URL)}, schema: ${JSON.stringify(schema)} },
  coordinator: { kind: "redis", url: ${JSON.stringify(REDIS_URL)}, keyPrefix: ${JSON.stringify(uniquePrefix())}, leaseTtlMs: 1500 },
  background: { keyPrefix: ${JSON.stringify(`cs-bg-${schema}`)}, takeoverAfter: "2s" },
  graphs: {
    steps: { graph: "./steps.ts:steps", description: "three steps" },
    ask: { graph: "./steps.ts:ask", description: "asks first", features: ["INTERRUPTS"] },
  },
};`,
      // Three steps; each says which process runs it and counts its completions, in Redis, by thread.
      "steps.ts": `
import { AIMessage } from "@langchain/core/messages";
import { END, interrupt, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { Redis } from "ioredis";
import { setTimeout as sleep } from "node:timers/promises";
const redis = new Redis(${JSON.stringify(REDIS_URL)});
const step = (name) => async (_state, config) => {
  const key = ${JSON.stringify(counter)} + ":" + config.metadata.thread_id;
  await redis.set(key + ":pid", String(process.pid));
  await redis.set(key + ":current", name);
  await sleep(900, undefined, { signal: config.signal });
  await redis.incr(key + ":" + name);
  return { messages: [new AIMessage(name + " done")] };
};
export const ask = new StateGraph(MessagesAnnotation)
  .addNode("ask", () => ({ messages: [new AIMessage("You answered: " + JSON.stringify(interrupt({ question: "Go on?" })))] }))
  .addEdge(START, "ask").addEdge("ask", END).compile();
export const steps = new StateGraph(MessagesAnnotation)
  .addNode("one", step("one")).addNode("two", step("two")).addNode("three", step("three"))
  .addEdge(START, "one").addEdge("one", "two").addEdge("two", "three").addEdge("three", END).compile();
`,
    });
    cleanups.push(project.cleanup, () => dropSchema(schema));
    const { Redis } = await import("ioredis");
    redis = new Redis(REDIS_URL);
    cleanups.push(() => void redis.disconnect());
    await Promise.all([start(), start(), start()]);
  });

  /** Starts a streamed run through `via`, reads it until step two has begun; its run id and the events seen. */
  async function streamUntilStepTwo(via: RunningServer) {
    const thread = await client(via).threads.create();
    const seen: { id?: string; event: string; data: unknown }[] = [];
    const iterator = client(via)
      .runs.stream(thread.thread_id, "steps", { input: user("go"), streamMode: ["updates"], streamResumable: true })
      [Symbol.asyncIterator]();
    const first = (await iterator.next()).value as { id?: string; event: string; data: { run_id: string } };
    seen.push(first);
    await eventually(async () => assert.equal((await current(thread.thread_id)).step, "two"), 10_000, 20);
    return { threadId: thread.thread_id, runId: first.data.run_id, seen, iterator };
  }

  /** The rest of a run's events through `via` after the last one seen; then what ran. */
  async function finishThrough(via: RunningServer, run: Awaited<ReturnType<typeof streamUntilStepTwo>>) {
    const lastId = run.seen.at(-1)?.id;
    assert.ok(lastId !== undefined, "resumable streams carry event ids");
    for await (const part of client(via).runs.joinStream(run.threadId, run.runId, { lastEventId: lastId })) run.seen.push(part);
    const updates = run.seen.filter((part) => part.event === "updates").map((part) => Object.keys(part.data as object)[0]);
    assert.deepEqual(updates, ["one", "two", "three"]);
    assert.equal((await client(via).runs.get(run.threadId, run.runId)).status, "success");
    // No step that had completed (and so was checkpointed) ran twice.
    assert.equal(await count(run.threadId, "one"), 1);
    assert.equal(await count(run.threadId, "three"), 1);
  }

  test("the replica running a streamed run is killed: another finishes it from its last step, the client reconnects through a third", async () => {
    const run = await streamUntilStepTwo(up()[0]!);
    const { pid } = await current(run.threadId);
    // The process running it, and the one the client streamed through.
    const victims = up().filter((server) => server.child.pid === pid || server === up()[0]);
    await Promise.all(victims.map((server) => server.stop("SIGKILL")));
    await finishThrough(up()[0]!, run);
  });

  test("a rolling restart: the replica running a run gets SIGTERM, hands the run back, and another goes on from its last step", async () => {
    while (up().length < 3) await start();
    const run = await streamUntilStepTwo(up()[0]!);
    const { pid } = await current(run.threadId);
    const running = up().find((server) => server.child.pid === pid)!;
    const via = up().find((server) => server !== running)!;
    assert.equal(await running.stop("SIGTERM"), 0, "it drains and exits cleanly");
    await finishThrough(via, run);
  });

  test("a rolling restart of all three under twelve runs: none lost, no completed step run again", { skip: haproxy.skip }, async () => {
    // Three replicas on ports of their own, so that each comes back where the balancer looks for it.
    for (const server of up()) await server.stop("SIGKILL");
    const ports = await Promise.all([0, 1, 2].map(() => freePort()));
    const startOn = async (port: number) => {
      const server = await startCli(["--port", String(port)], { cwd: project.dir, ownPort: true });
      cleanups.push(() => void server.stop("SIGKILL"));
      servers.push(server);
      return server;
    };
    const replicas = await Promise.all(ports.map(startOn));
    const balancer = await startHaproxy(ports.map((port) => `127.0.0.1:${port}`));
    cleanups.push(balancer.stop);
    const lb = new Client({ apiUrl: balancer.origin });
    const runs = await Promise.all(
      Array.from({ length: 12 }, async () => {
        const thread = await lb.threads.create();
        return { thread: thread.thread_id, run: (await lb.runs.create(thread.thread_id, "steps", { input: user("go") })).run_id };
      }),
    );
    // Each replica in turn: SIGTERM (it drains, hands its runs back), then a new one on its port.
    for (const [index, replica] of replicas.entries()) {
      assert.equal(await replica.stop("SIGTERM"), 0);
      replicas[index] = await startOn(ports[index]!);
    }
    for (const { thread, run } of runs) {
      // A run that does not end within a minute fails the test with its record and the replicas' output, never a hang.
      const joined = await lb.runs.join(thread, run, { signal: AbortSignal.timeout(60_000) }).catch((error: unknown) => error);
      if (joined instanceof Error) {
        const record = await lb.runs.get(thread, run).catch((error: unknown) => String(error));
        // What every replica of the test said beyond its banner (the stopped ones too).
        const outputs = servers
          .map((server) =>
            server
              .output()
              .split("\n")
              .filter((line) => /warn|error|could not|fail/iu.test(line))
              .join("\n"),
          )
          .join("\n---\n");
        assert.fail(`run ${run} did not end within a minute: ${JSON.stringify(record)}\n${outputs}`);
      }
      assert.equal((await lb.runs.get(thread, run)).status, "success", `run ${run}`);
      for (const name of ["one", "two", "three"]) assert.equal(await count(thread, name), 1, `${name} of ${run}`);
    }
  });

  test("protocol v2: events followed on one replica, commands sent to others, the run's replica killed mid-run", async () => {
    while (up().length < 3) await start();
    const threadId = crypto.randomUUID();
    const post = (server: RunningServer, path: string, body: unknown, signal?: AbortSignal) =>
      fetch(`${new URL(server.baseURL).origin}/threads/${threadId}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
        ...(signal === undefined ? {} : { signal }),
      });
    const command = async (server: RunningServer, method: string, params: Record<string, unknown> = {}) =>
      (await (await post(server, "/commands", { id: 1, method, params })).json()) as Record<string, any>;
    // The thread's events, followed on one replica; when it goes, again from the last `seq` on another.
    const seen: { seq: number; method: string; params: { namespace: string[]; node?: string; data: any } }[] = [];
    const follow = async () => {
      for (;;) {
        const via = up()[0]!;
        const controller = new AbortController();
        try {
          const response = await post(
            via,
            "/stream/events",
            { channels: ["lifecycle", "updates"], since: seen.at(-1)?.seq ?? 0 },
            controller.signal,
          );
          let text = "";
          for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
            text += Buffer.from(chunk).toString();
            for (let end = text.indexOf("\n\n"); end !== -1; end = text.indexOf("\n\n")) {
              const data = text
                .slice(0, end)
                .split("\n")
                .find((line) => line.startsWith("data: "));
              text = text.slice(end + 2);
              if (data === undefined) continue;
              const event = JSON.parse(data.slice(6));
              seen.push(event);
              if (event.method === "lifecycle" && event.params.namespace.length === 0 && event.params.data.event === "completed") return;
            }
          }
        } catch {
          // Its replica went: on to another.
        } finally {
          controller.abort();
        }
      }
    };
    const following = follow();
    const [, commands, reads] = up();
    const started = await command(commands!, "run.start", { assistant_id: "steps", input: user("go") });
    assert.equal(started.type, "success", JSON.stringify(started));
    await eventually(async () => assert.equal((await current(threadId)).step, "two"), 10_000, 20);
    const { pid } = await current(threadId);
    await up()
      .find((server) => server.child.pid === pid)!
      .stop("SIGKILL");
    await following;
    const updates = seen.filter((event) => event.method === "updates" && event.params.namespace.length === 0);
    assert.deepEqual(
      updates.map((event) => event.params.node),
      ["one", "two", "three"],
    );
    assert.ok(
      seen.every((event, index) => index === 0 || event.seq > seen[index - 1]!.seq),
      "numbered in order, none twice",
    );
    assert.equal(await count(threadId, "one"), 1);
    assert.equal(await count(threadId, "three"), 1);
    // Commands on any replica read the same thread: its state, its tree, its log.
    const via = up().find((server) => server !== reads) ?? reads!;
    const state = await command(via, "state.get");
    assert.equal(lastText(state.result.values), "three done");
    const tree = await command(up()[0]!, "agent.getTree");
    assert.equal(tree.result.tree.status, "completed");
    assert.equal(tree.meta.applied_through_seq >= seen.at(-1)!.seq, true);
    // Time travel from any replica: the checkpoints listed on one, a fork made on another, from the one after step one.
    const listed = await command(up()[0]!, "state.listCheckpoints", { limit: 20 });
    const afterOne = (listed.result.checkpoints as { id: string; step: number }[]).find((checkpoint) => checkpoint.step === 1);
    assert.ok(afterOne, JSON.stringify(listed.result));
    const forked = await command(up().at(-1)!, "state.fork", { checkpoint_id: afterOne.id });
    assert.equal(forked.type, "success", JSON.stringify(forked));
    await eventually(async () => assert.equal(lastText((await command(up()[0]!, "state.get")).result.values), "three done"), 20_000, 100);
    assert.equal(await count(threadId, "one"), 1, "the fork goes on after step one: step one is not run again");
    await eventually(async () => assert.equal(await count(threadId, "three"), 2), 20_000, 100);
  });

  test("an MCP session across three replicas behind HAProxy: each question asked on one is answered through another", {
    skip: haproxy.skip,
  }, async () => {
    while (up().length < 3) await start();
    const replicas = up();
    const balancer = await startHaproxy(replicas.map((server) => new URL(server.baseURL).host));
    cleanups.push(balancer.stop);
    const { client, transport, asked, close } = await connectMcp(`${balancer.origin}/v1/mcp`, {
      elicit: () => ({ action: "accept", content: { answer: "yes" } }),
    });
    for (let round = 0; round < 3; round += 1) {
      const result = await client.callTool({ name: "ask", arguments: { message: `go ${round}` } });
      assert.match(resultText(result), /You answered: .*yes/u);
    }
    assert.equal(asked.length, 3, "each call asked its question by elicitation");
    // Round robin per request: the session's requests (and the answers to its questions) reached
    // every replica, which only a session every replica knows survives. Its end reaches them all.
    const sessionId = transport.sessionId!;
    await transport.terminateSession();
    await close();
    const ended = await fetch(`${balancer.origin}/v1/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-session-id": sessionId },
      body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list" }),
    });
    assert.equal(ended.status, 404);
  });

  test("behind HAProxy, round robin per request: runs, joins, reconnects and reject hold whichever replica answers", {
    skip: haproxy.skip,
  }, async () => {
    while (up().length < 3) await start();
    const balancer = await startHaproxy(up().map((server) => new URL(server.baseURL).host));
    cleanups.push(balancer.stop);
    const lb = new Client({ apiUrl: balancer.origin });
    // 20 concurrent runs with reject on one thread, spread over the replicas: one is made.
    const contested = await lb.threads.create();
    const attempts = await Promise.allSettled(
      Array.from({ length: 20 }, (_unused, index) => lb.runs.create(contested.thread_id, "steps", { input: user(`${index}`) })),
    );
    assert.equal(attempts.filter((attempt) => attempt.status === "fulfilled").length, 1);
    // A streamed run: each request of the client (the stream, its reconnect) may reach another replica.
    const thread = await lb.threads.create();
    const seen: { id?: string; event: string; data: unknown }[] = [];
    const iterator = lb.runs
      .stream(thread.thread_id, "steps", { input: user("go"), streamMode: ["updates"], streamResumable: true })
      [Symbol.asyncIterator]();
    const first = (await iterator.next()).value as { id?: string; event: string; data: { run_id: string } };
    seen.push(first);
    await eventually(async () => assert.equal((await current(thread.thread_id)).step, "two"), 10_000, 20);
    // The replica running it dies; the client's stream (wherever it is) is dropped and picked up again through the balancer.
    const { pid } = await current(thread.thread_id);
    await up()
      .find((server) => server.child.pid === pid)!
      .stop("SIGKILL");
    await iterator.return?.(undefined);
    for await (const part of lb.runs.joinStream(thread.thread_id, first.data.run_id, { lastEventId: first.id ?? "0" })) seen.push(part);
    assert.deepEqual(
      seen.filter((part) => part.event === "updates").map((part) => Object.keys(part.data as object)[0]),
      ["one", "two", "three"],
    );
    assert.equal(await count(thread.thread_id, "one"), 1);
    assert.equal(lastText((await lb.threads.get(thread.thread_id)).values), "three done");
    // Protocol v2 through the balancer, as the SDK's ThreadStream speaks it: its event stream on
    // one replica, each command on the next.
    const protocol = lb.threads.stream({ assistantId: "steps" });
    const values = protocol.values;
    await protocol.run.start({ input: user("go") });
    assert.equal(lastText(await values), "three done");
    const state = (await protocol.state.get({ namespace: [] })) as { values: unknown };
    assert.equal(lastText(state.values), "three done");
    await protocol.close();
  });
});
