import assert from "node:assert/strict";
import { once } from "node:events";
import { describe, test } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import { startCli } from "../helpers/cli.js";
import { freePort, startRedis } from "../helpers/private-redis.js";
import { cleanupsAfterAll, dropSchema, POSTGRES_URL, requireRedisAndPostgres, uniqueSchema } from "../helpers/services.js";
import { startPostgresProxy } from "../helpers/tcp-proxy.js";
import { tempProject } from "../helpers/temp-project.js";

// The Agent Protocol's queued runs while the services under them fail: a Redis of the test's
// own (paused with SIGSTOP, as a stalled or failing-over Redis looks) and Postgres behind a
// proxy the test stops. What a client asks meanwhile gets 503 within the deadline, never a
// hang; the runs queued before are not lost, and finish once the service is back.

const skip = await requireRedisAndPostgres();
const cleanups = cleanupsAfterAll();
const TIMEOUT_MS = 1_000;

const user = (content: string) => ({ messages: [{ role: "user", content }] });

describe("queued Agent Protocol runs while Redis or Postgres fails", { skip, timeout: 180_000 }, () => {
  test("a stalled Redis, then Postgres down: 503 within the deadline, and every queued run finishes once they are back", async () => {
    const redisPort = await freePort();
    const redis = await startRedis(redisPort);
    cleanups.push(async () => {
      redis.kill("SIGCONT");
      redis.kill("SIGKILL");
      if (redis.exitCode === null) await once(redis, "exit");
    });
    const { proxy, url } = await startPostgresProxy(POSTGRES_URL);
    cleanups.push(() => proxy.stop());
    const schema = uniqueSchema();
    const project = tempProject({
      "chat-serve.config.ts": `export default {
  backendTimeoutMs: ${TIMEOUT_MS},
  checkpointer: { kind: "postgres", url: ${JSON.stringify(url)}, schema: ${JSON.stringify(schema)} },
  coordinator: { kind: "redis", url: "redis://127.0.0.1:${redisPort}", leaseTtlMs: 3000 },
  background: { takeoverAfter: "2s" },
  graphs: { steps: { graph: "./steps.ts:steps", description: "two steps" } },
};`,
      "steps.ts": `
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { setTimeout as sleep } from "node:timers/promises";
const step = (name) => async (_state, config) => {
  await sleep(400, undefined, { signal: config.signal });
  return { messages: [new AIMessage(name + " done")] };
};
export const steps = new StateGraph(MessagesAnnotation)
  .addNode("one", step("one")).addNode("two", step("two"))
  .addEdge(START, "one").addEdge("one", "two").addEdge("two", END).compile();
`,
    });
    cleanups.push(project.cleanup, () => dropSchema(schema));
    const server = await startCli([], { cwd: project.dir });
    cleanups.push(() => void server.stop("SIGKILL"));
    const client = new Client({ apiUrl: new URL(server.baseURL).origin, callerOptions: { maxRetries: 0 } });
    /** A run created now: its status, and how long the answer took. */
    const create = async () => {
      const started = performance.now();
      const thread = await client.threads.create().catch((error: { status?: number }) => error);
      if (!("thread_id" in thread)) return { status: thread.status, ms: performance.now() - started };
      const run = await client.runs
        .create(thread.thread_id, "steps", { input: user("go") })
        .then((made) => ({ status: 200, thread: thread.thread_id, run: made.run_id }))
        .catch((error: { status?: number }) => ({ status: error.status }));
      return { ...run, ms: performance.now() - started };
    };
    const queued = async (count: number) => {
      const made = await Promise.all(Array.from({ length: count }, create));
      for (const one of made) assert.equal(one.status, 200);
      return made as { thread: string; run: string }[];
    };
    /** Each run ends in success; one that has not within a minute fails the test with what the run and the server say (never a hang). */
    const allSucceed = async (runs: { thread: string; run: string }[]) => {
      for (const { thread, run } of runs) {
        const joined = client.runs.join(thread, run, { signal: AbortSignal.timeout(60_000) }).catch((error: unknown) => error);
        if ((await joined) instanceof Error) {
          const record = await client.runs.get(thread, run).catch((error: unknown) => String(error));
          assert.fail(`run ${run} did not end within a minute: ${JSON.stringify(record)}\n${server.output().slice(-4000)}`);
        }
        assert.equal((await client.runs.get(thread, run)).status, "success", `run ${run}`);
      }
    };

    // Redis stalls under three queued runs.
    const beforeStall = await queued(3);
    redis.kill("SIGSTOP");
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const refused = await create();
      assert.equal(refused.status, 503, server.output().slice(-3000));
      assert.ok(refused.ms < TIMEOUT_MS * 2 + 1_000, `refused in ${Math.round(refused.ms)} ms`);
    }
    redis.kill("SIGCONT");
    await allSucceed(beforeStall);

    // Postgres goes away under three more.
    const beforeOutage = await queued(3);
    await proxy.stop();
    const refused = await create();
    assert.equal(refused.status, 503, server.output().slice(-3000));
    assert.ok(refused.ms < TIMEOUT_MS * 2 + 1_000, `refused in ${Math.round(refused.ms)} ms`);
    await proxy.start();
    await allSucceed(beforeOutage);
    await allSucceed(await queued(1));
    assert.equal(await server.stop("SIGTERM"), 0, server.output());
  });
});
