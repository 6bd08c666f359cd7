import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { Client } from "@langchain/langgraph-sdk";
import OpenAI from "openai";
import { type RunningServer, type RunningWorker, runCli, startCli, startWorker } from "../helpers/cli.js";
import { eventually } from "../helpers/eventually.js";
import { startReceiver } from "../helpers/loopback-receiver.js";
import {
  cleanupsAfterAll,
  dropSchema,
  POSTGRES_URL,
  REDIS_URL,
  requireRedisAndPostgres,
  uniquePrefix,
  uniqueSchema,
} from "../helpers/services.js";
import { ECHO_GRAPH_MODULE, tempProject } from "../helpers/temp-project.js";

// A deployment as operators run one: two `chat-serve start` processes and a `chat-serve
// worker`, on the real Redis (queue, leases) and Postgres (store, checkpoints). Every run is
// executed once; a worker killed with SIGKILL mid-run loses it to another process, which goes
// on from the last step completed; a cancel crosses processes; each webhook is sent once.

const skip = await requireRedisAndPostgres();
const cleanups = cleanupsAfterAll();

/** Three steps; each writes a line when it starts and ends, with the run's input and its process. */
const STEPS_MODULE = `
import { appendFileSync } from "node:fs";
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const step = (node) => async (state) => {
  const input = state.messages.find((message) => message.getType() === "human").text;
  appendFileSync(process.env.STEP_LOG, input + " " + node + " start " + process.pid + "\\n");
  await sleep(input.startsWith("slow") ? 1500 : 30);
  appendFileSync(process.env.STEP_LOG, input + " " + node + " end " + process.pid + "\\n");
  return { messages: [new AIMessage(node + " done for " + input)] };
};
export const graph = new StateGraph(MessagesAnnotation)
  .addNode("one", step("one")).addNode("two", step("two")).addNode("three", step("three"))
  .addEdge(START, "one").addEdge("one", "two").addEdge("two", "three").addEdge("three", END)
  .compile();
`;

interface Deployment {
  servers: [RunningServer, RunningServer];
  worker: RunningWorker;
  clients: [OpenAI, OpenAI];
  log: string;
  webhooks: Awaited<ReturnType<typeof startReceiver>>;
}

let deployment: Deployment;

before(async () => {
  if (skip) return;
  const schema = uniqueSchema();
  const webhooks = await startReceiver();
  cleanups.push(() => webhooks.close());
  const project = tempProject({
    "chat-serve.config.ts": `export default {
  checkpointer: { kind: "postgres", url: ${JSON.stringify(POSTGRES_URL)}, schema: ${JSON.stringify(schema)} },
  coordinator: { kind: "redis", url: ${JSON.stringify(REDIS_URL)}, keyPrefix: ${JSON.stringify(uniquePrefix())} },
  background: { concurrency: 4, takeoverAfter: "2s", keyPrefix: ${JSON.stringify(`cs-bg-${schema}`)} },
  webhooks: [{ url: ${JSON.stringify(`${webhooks.url}/hook`)}, secret: "whsec_${Buffer.from("a secret of 32 bytes, for tests!").toString("base64")}" }],
  server: { shutdownGraceMs: 1000 },
  graphs: { steps: { graph: "./steps.ts:graph", description: "three steps" } },
};`,
    "steps.ts": STEPS_MODULE,
  });
  cleanups.push(project.cleanup, () => dropSchema(schema));
  const log = path.join(project.dir, "steps.log");
  writeFileSync(log, "");
  const env = { STEP_LOG: log };
  const first = await startCli([], { cwd: project.dir, env });
  cleanups.push(() => void first.stop("SIGKILL"));
  const second = await startCli([], { cwd: project.dir, env });
  cleanups.push(() => void second.stop("SIGKILL"));
  const worker = await startWorker([], { cwd: project.dir, env });
  cleanups.push(() => void worker.stop("SIGKILL"));
  const clients = [first, second].map((server) => new OpenAI({ baseURL: server.baseURL, apiKey: "x", maxRetries: 0 }));
  deployment = { servers: [first, second], worker, clients: clients as [OpenAI, OpenAI], log, webhooks };
});

/** The step log's lines of one input: `node event pid`. */
function steps(input: string): { node: string; event: string; pid: number }[] {
  return readFileSync(deployment.log, "utf8")
    .split("\n")
    .filter((line) => line.startsWith(`${input} `))
    .map((line) => {
      const [node, event, pid] = line.slice(input.length + 1).split(" ");
      return { node: node!, event: event!, pid: Number(pid) };
    });
}

async function settled(client: OpenAI, id: string, timeoutMs = 30_000): Promise<OpenAI.Responses.Response> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await client.responses.retrieve(id);
    if (!["queued", "in_progress"].includes(response.status ?? "")) return response;
    if (Date.now() > deadline) assert.fail(`${id} still ${response.status} after ${timeoutMs} ms`);
    await sleep(100);
  }
}

describe("background runs on two servers and a worker", { skip, timeout: 180_000 }, () => {
  test("50 runs spread over the three processes, each executed exactly once; one webhook each", async () => {
    const { clients } = deployment;
    const inputs = Array.from({ length: 50 }, (_, index) => `run-${index}-${randomUUID().slice(0, 8)}`);
    const created = await Promise.all(
      inputs.map((input, index) => clients[index % 2]!.responses.create({ model: "steps", input, background: true })),
    );
    for (const [index, response] of created.entries()) {
      const done = await settled(clients[(index + 1) % 2]!, response.id);
      assert.equal(done.status, "completed");
      assert.equal(done.output_text, `three done for ${inputs[index]}`);
    }
    const pids = new Set<number>();
    for (const input of inputs) {
      const started = steps(input).filter((line) => line.event === "start");
      assert.deepEqual(
        started.map((line) => line.node),
        ["one", "two", "three"],
        `${input} ran ${started.map((line) => line.node).join(", ")}`,
      );
      for (const line of started) pids.add(line.pid);
    }
    assert.ok(pids.size >= 2, `every run went to one process (${[...pids].join(", ")})`);
    // One delivery per response across the deployment (none failed, so none was retried).
    await eventually(async () => {
      const delivered = deployment.webhooks.requests.map((request) => (JSON.parse(request.body) as { data: { id: string } }).data.id);
      const ours = delivered.filter((id) => created.some((response) => response.id === id));
      assert.equal(ours.length, created.length, `${ours.length} deliveries`);
      assert.equal(new Set(ours).size, created.length, "a response was delivered twice");
    }, 10_000);
  });

  test("Agent Protocol runs the worker takes send their webhooks from it, one each", async () => {
    const [first] = deployment.servers;
    const client = new Client({ apiUrl: new URL(first.baseURL).origin });
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const workerPid = deployment.worker.child.pid;
    const made: { threadId: string; runId: string; input: string }[] = [];
    // Batches until the worker has run one (the three processes share the queue as it comes).
    for (let batch = 0; batch < 5 && !made.some(({ input }) => steps(input).some((line) => line.pid === workerPid)); batch++) {
      const inputs = Array.from({ length: 6 }, (_, index) => `agent-${batch}-${index}-${randomUUID().slice(0, 8)}`);
      for (const input of inputs) {
        const thread = await client.threads.create();
        const run = await client.runs.create(thread.thread_id, "steps", {
          input: { messages: [{ role: "user", content: input }] },
          webhook: `${receiver.url}/run-ended`,
        });
        made.push({ threadId: thread.thread_id, runId: run.run_id, input });
      }
      for (const { threadId, runId } of made) await client.runs.join(threadId, runId);
    }
    assert.ok(
      made.some(({ input }) => steps(input).some((line) => line.pid === workerPid)),
      "the worker ran none of the runs",
    );
    await eventually(async () => {
      const sent = receiver.requests.map((request) => JSON.parse(request.body) as { run_id: string; status: string });
      assert.deepEqual(
        sent.map((body) => body.run_id).sort(),
        made.map(({ runId }) => runId).sort(),
        deployment.worker.output().slice(-2000),
      );
      assert.ok(sent.every((body) => body.status === "success"));
    }, 10_000);
  });

  test("a cancel sent to one server ends the run another process executes within a second", async () => {
    const { clients, servers, worker } = deployment;
    const input = `slow-cancel-${randomUUID().slice(0, 8)}`;
    const created = await clients[0].responses.create({ model: "steps", input, background: true });
    let runner = 0;
    await eventually(async () => {
      const started = steps(input).find((line) => line.node === "one");
      assert.ok(started !== undefined, "not started");
      runner = started.pid;
    }, 10_000);
    // Through a server that is not running it.
    const client = runner === servers[0].child.pid ? clients[1] : clients[0];
    assert.notEqual(worker.child.pid, undefined);
    const sent = Date.now();
    await client.responses.cancel(created.id);
    await eventually(async () => {
      assert.equal((await client.responses.retrieve(created.id)).status, "cancelled", "not cancelled yet");
    }, 5_000);
    assert.ok(Date.now() - sent < 1_000, `took ${Date.now() - sent} ms`);
    await sleep(1_600);
    assert.ok(!steps(input).some((line) => line.node === "two"), "a step ran after the cancel");
  });

  test("SIGKILL of the process running a run: another takes it over and goes on from the last step completed", async () => {
    const { clients, servers, worker } = deployment;
    const input = `slow-kill-${randomUUID().slice(0, 8)}`;
    const created = await clients[0].responses.create({ model: "steps", input, background: true });
    let victim = 0;
    await eventually(async () => {
      const started = steps(input).find((line) => line.node === "two" && line.event === "start");
      assert.ok(started !== undefined, "step two has not started");
      victim = started.pid;
    }, 15_000);
    const processes = [...servers, worker];
    const killed = processes.find((process) => process.child.pid === victim)!;
    killed.child.kill("SIGKILL");
    const survivor = killed === servers[0] ? clients[1] : clients[0];
    const killedAt = Date.now();
    const done = await settled(survivor, created.id, 30_000);
    assert.equal(done.status, "completed");
    assert.equal(done.output_text, `three done for ${input}`);
    const log = steps(input).filter((line) => line.event === "start");
    // Step one ran once; step two, in flight at the kill, ran again elsewhere; then step three.
    assert.deepEqual(
      log.map((line) => `${line.node}${line.pid === victim ? "@killed" : ""}`),
      ["one@killed", "two@killed", "two", "three"],
    );
    // Taken over within the takeover time (2 s) and a few seconds, not after the coordinator's
    // 30 s lease TTL: the run's leases last no longer than takeoverAfter.
    const retaken = Date.now() - killedAt;
    assert.ok(retaken < 10_000, `took ${retaken} ms`);
  });

  test("SIGTERM: the processes still running drain and exit cleanly", async () => {
    const { servers, worker } = deployment;
    for (const process of [worker, ...servers]) {
      if (process.child.exitCode !== null || process.child.signalCode !== null) continue;
      assert.equal(await process.stop("SIGTERM"), 0, process.output());
    }
  });
});

describe("chat-serve worker without a shared queue", { timeout: 60_000 }, () => {
  test("exits 1 with one line saying what the config needs", async () => {
    const project = tempProject({
      "chat-serve.config.ts": `export default { graphs: { echo: { graph: "./echo.ts:graph", description: "echo" } } };`,
      "echo.ts": ECHO_GRAPH_MODULE,
    });
    cleanups.push(project.cleanup);
    const result = await runCli(["worker"], { cwd: project.dir });
    assert.equal(result.code, 1);
    const lines = result.stderr.trim().split("\n");
    assert.equal(lines.length, 1, result.stderr);
    assert.match(
      lines[0]!,
      /chat-serve worker takes background runs from a queue the servers share, on Redis: set coordinator to \{ kind: "redis", url \}.* in chat-serve\.config\.ts$/u,
    );
  });
});
