import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { Client } from "@langchain/langgraph-sdk";
import OpenAI from "openai";
import pg from "pg";
import { RedisRunCoordinator } from "../../src/coordination/redis-run-coordinator.js";
import { checkpointKey } from "../../src/runs/interrupts/checkpoint-key.js";
import { runCli, startCli } from "../helpers/cli.js";
import { distributedProject } from "../helpers/distributed-project.js";
import { eventually } from "../helpers/eventually.js";
import { connectMcp, resultText } from "../helpers/mcp.js";
import { freePort } from "../helpers/private-redis.js";
import { answerBatch } from "../helpers/resume.js";
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

const skip = await requireRedisAndPostgres();
const cleanups = cleanupsAfterAll();

function project(extraConfig?: string) {
  const schema = uniqueSchema();
  const keyPrefix = uniquePrefix();
  const coordinator = `{ kind: "redis", url: ${JSON.stringify(REDIS_URL)}, keyPrefix: ${JSON.stringify(keyPrefix)} }`;
  const made = distributedProject({ coordinator, schema, postgresUrl: POSTGRES_URL, extraConfig });
  cleanups.push(made.cleanup, () => dropSchema(schema));
  return { ...made, schema, keyPrefix, env: { COUNTER_REDIS_URL: REDIS_URL, COUNTER_KEY: `${keyPrefix}count` } };
}

describe("chat-serve purge-pending", { skip, timeout: 60_000 }, () => {
  test("removes idle pending runs from Postgres; --dry-run removes nothing; a run whose lease is held is skipped", async () => {
    const { dir, schema, keyPrefix, env } = project();
    const server = await startCli([], { cwd: dir, env });
    cleanups.push(() => void server.stop("SIGKILL"));
    const client = new OpenAI({ baseURL: server.baseURL, apiKey: "x", maxRetries: 0 });
    const runs = [randomUUID(), randomUUID()];
    for (const runId of runs) {
      const paused = await client.chat.completions.create({
        model: "counter",
        messages: [{ role: "user", content: "go" }],
        metadata: { graph_run_id: runId },
      });
      assert.equal(paused.choices[0]?.finish_reason, "tool_calls");
    }
    const keys = runs.map((runId) => checkpointKey("default", "counter", runId));
    const database = new pg.Client({ connectionString: POSTGRES_URL });
    await database.connect();
    cleanups.push(() => database.end());
    const state = async (key: string) => {
      const checkpoints = await database.query(`SELECT count(*)::int AS n FROM "${schema}".checkpoints WHERE thread_id = $1`, [key]);
      const index = await database.query(`SELECT count(*)::int AS n FROM "${schema}".chat_serve_pending_runs WHERE key = $1`, [key]);
      return { checkpoints: checkpoints.rows[0].n as number, indexed: index.rows[0].n as number };
    };
    for (const key of keys) assert.ok((await state(key)).checkpoints > 0 && (await state(key)).indexed === 1);

    await sleep(1_100);
    const dryRun = await runCli(["purge-pending", "--older-than", "1s", "--dry-run", "--json"], { cwd: dir, env });
    assert.equal(dryRun.code, 0, dryRun.stderr);
    assert.deepEqual(
      JSON.parse(dryRun.stdout)
        .map((row: { runId: string; outcome: string }) => [row.runId, row.outcome])
        .sort(),
      runs.map((runId) => [runId, "would remove"]).sort(),
    );
    for (const key of keys) assert.equal((await state(key)).indexed, 1, "a dry run removes nothing");

    const holder = new RedisRunCoordinator({ url: REDIS_URL, keyPrefix });
    cleanups.push(() => holder.close());
    const lease = await holder.tryAcquire(keys[1]!);
    assert.ok(lease);
    const purge = await runCli(["purge-pending", "--older-than", "1s"], { cwd: dir, env });
    assert.equal(purge.code, 0, purge.stderr);
    assert.match(purge.stdout, /removed 1 of 2 pending runs/);
    assert.match(purge.stdout, /skipped: in use/);
    assert.deepEqual(await state(keys[0]!), { checkpoints: 0, indexed: 0 });
    assert.equal((await state(keys[1]!)).indexed, 1, "the run in use was skipped");
    await lease.release();

    const rest = await runCli(["purge-pending", "--older-than", "1s", "--json"], { cwd: dir, env });
    assert.deepEqual(
      JSON.parse(rest.stdout).map((row: { outcome: string }) => row.outcome),
      ["removed"],
    );
    assert.deepEqual(await state(keys[1]!), { checkpoints: 0, indexed: 0 });
    const none = await runCli(["purge-pending", "--older-than", "1s"], { cwd: dir, env });
    assert.match(none.stdout, /no pending runs idle for more than 1s/);
  });

  test("a purge never creates anything: --dry-run against a mistyped schema leaves the database alone and exits 0", async () => {
    const { dir, schema, env } = project();
    const result = await runCli(["purge-pending", "--older-than", "1h", "--dry-run"], { cwd: dir, env });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, new RegExp(`nothing to purge: schema '${schema}' has no chat-serve tables`, "u"));
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      const { rows } = await client.query("SELECT 1 FROM information_schema.schemata WHERE schema_name = $1", [schema]);
      assert.equal(rows.length, 0, "the schema was not created");
    } finally {
      await client.end();
    }
  });

  test("with the memory checkpointer there is nothing to purge, and that is a success; a bad duration is one line", async () => {
    const memory = tempProject({
      "chat-serve.config.ts": `export default { graphs: { echo: { graph: "./g.ts:graph", description: "x" } } };`,
      "g.ts": ECHO_GRAPH_MODULE,
    });
    cleanups.push(memory.cleanup);
    const result = await runCli(["purge-pending", "--older-than", "1h"], { cwd: memory.dir });
    assert.equal(result.code, 0, "a scheduled purge must not fail for having nothing to do");
    assert.match(result.stdout.trim(), /^nothing to purge: chat-serve\.config\.ts uses the memory checkpointer/u);
    assert.equal((await runCli(["purge-pending", "--older-than", "1h", "--json"], { cwd: memory.dir })).stdout.trim(), "[]");
    const bad = await runCli(["purge-pending", "--older-than", "soon"], { cwd: memory.dir });
    assert.equal(bad.stderr.trim(), "error --older-than must be a duration like 90m, 12h or 7d (got 'soon')");
  });
});

describe("pending-run expiry", { skip, timeout: 60_000 }, () => {
  test("with two servers running, an expired run is deleted once, a fresh one is left, and `pending` lists them", async () => {
    const { dir, schema, env } = project(`pendingRuns: { expireAfter: "3s", sweepEvery: "500ms" },`);
    const servers = await Promise.all([0, 1].map(() => startCli([], { cwd: dir, env: { ...env, LOG_LEVEL: "info" } })));
    for (const server of servers) cleanups.push(() => void server.stop("SIGKILL"));
    const client = new OpenAI({ baseURL: servers[0]!.baseURL, apiKey: "x", maxRetries: 0 });
    const calls = new Map<string, OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall[]>();
    const pause = async () => {
      const paused = await client.chat.completions.create({ model: "counter", messages: [{ role: "user", content: "go" }] });
      const toolCalls = paused.choices[0]!.message.tool_calls as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall[];
      const runId = JSON.parse(toolCalls[0]!.function.arguments).run_id as string;
      calls.set(runId, toolCalls);
      return runId;
    };
    const old = await pause();
    const listed = JSON.parse((await runCli(["pending", "--json"], { cwd: dir, env })).stdout) as { runId: string; scope: string }[];
    assert.deepEqual(
      listed.map((row) => [row.runId, row.scope]),
      [[old, "default"]],
    );
    await sleep(1_500);
    const fresh = await pause();
    const db = new pg.Client({ connectionString: POSTGRES_URL });
    await db.connect();
    try {
      const expiredAt = async (runId: string) =>
        (await db.query(`SELECT expired_at FROM "${schema}".chat_serve_pending_runs WHERE run_id = $1`, [runId])).rows[0]?.expired_at;
      for (let wait = 0; wait < 60 && (await expiredAt(old)) == null; wait += 1) await sleep(100);
      assert.ok(await expiredAt(old), "the old run expired");
      assert.equal(await expiredAt(fresh), null, "the fresh run is left alone");
      const checkpoints = await db.query(`SELECT count(*) FROM "${schema}".checkpoints WHERE thread_id = $1`, [
        checkpointKey("default", "counter", old),
      ]);
      assert.equal(Number(checkpoints.rows[0].count), 0, "its checkpoints are gone");
    } finally {
      await db.end();
    }
    const sweeps = servers.map(
      (server) =>
        server
          .output()
          .split("\n")
          .filter((line) => line.includes("expired 1 pending run")).length,
    );
    assert.equal(sweeps[0]! + sweeps[1]!, 1, `exactly one server expired it: ${sweeps}`);
    const stillPending = JSON.parse((await runCli(["pending", "--json"], { cwd: dir, env })).stdout) as { runId: string }[];
    assert.deepEqual(
      stillPending.map((row) => row.runId),
      [fresh],
    );
    const table = await runCli(["pending", "--older-than", "1h"], { cwd: dir, env });
    assert.equal(table.stdout.trim(), "no pending runs idle for more than 1h");
    // Long after (more than two expiry periods of sweeps on both servers), the client that comes
    // back to the other server is still told the run expired.
    await sleep(7_000);
    const late = new OpenAI({ baseURL: servers[1]!.baseURL, apiKey: "x", maxRetries: 0 });
    await assert.rejects(
      late.chat.completions.create({
        model: "counter",
        messages: answerBatch([{ role: "user", content: "go" }], calls.get(old)!, JSON.stringify({ resume: "yes" })),
      }),
      (error: InstanceType<typeof OpenAI.APIError>) => {
        assert.equal(error.status, 409);
        assert.match(error.message, /This run expired/u);
        return true;
      },
    );
  });
});

describe("chat-serve start --workers", { skip, timeout: 180_000 }, () => {
  test("N workers serve one port and share interrupt runs", async () => {
    const { dir, env } = project();
    const server = await startCli(["--workers", "2"], { cwd: dir, env });
    cleanups.push(() => void server.stop("SIGKILL"));
    assert.match(server.output(), /\(2 workers/);
    // A request that hangs fails with the servers' log instead of the suite's bare timeout.
    const client = new OpenAI({ baseURL: server.baseURL, apiKey: "x", maxRetries: 0, timeout: 15_000 });
    const history: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: "user", content: "go" }];
    try {
      for (let round = 0; round < 3; round += 1) {
        const paused = await client.chat.completions.create({ model: "counter", messages: history });
        const calls = paused.choices[0]!.message.tool_calls!;
        const done = await client.chat.completions.create({
          model: "counter",
          messages: answerBatch(history, calls, "yes"),
        });
        assert.equal(done.choices[0]?.message.content, "done");
      }
    } catch (error) {
      throw new Error(`${(error as Error).message}\nchat-serve's output:\n${server.output()}`, { cause: error });
    }
    assert.equal(await server.stop("SIGTERM"), 0);
  });

  test("MCP sessions are shared by the workers: each request lands on any worker, a paused run's question is answered by elicitation", async () => {
    const { dir, env } = project();
    const server = await startCli(["--workers", "2"], { cwd: dir, env });
    cleanups.push(() => void server.stop("SIGKILL"));
    const url = `${server.baseURL}/mcp`;
    try {
      // New connections each time, so both workers take requests.
      const { client, asked, close } = await connectMcp(url, {
        elicit: () => ({ action: "accept", content: { answer: "yes" } }),
        headers: { connection: "close" },
      });
      for (let round = 0; round < 3; round += 1) {
        const done = await client.callTool({ name: "counter", arguments: { message: "go" } });
        assert.equal(resultText(done), "done");
      }
      assert.equal(asked.length, 3, "each call asked by elicitation, its answer reaching the worker that asked");
      await close();
    } catch (error) {
      throw new Error(`${(error as Error).message}\nchat-serve's output:\n${server.output()}`, { cause: error });
    }
    assert.equal(await server.stop("SIGTERM"), 0);
  });

  test("the Agent Protocol on every worker: a thread's runs, its interrupt and protocol v2 reach any of them", async () => {
    const { dir, env } = project();
    const server = await startCli(["--workers", "2"], { cwd: dir, env });
    cleanups.push(() => void server.stop("SIGKILL"));
    const origin = new URL(server.baseURL).origin;
    await eventually(async () => assert.match(server.output(), new RegExp(`\\n {2}langgraph +${origin}`, "u")), 5_000);
    // A connection per request, so that both workers take them.
    const client = new Client({ apiUrl: origin, defaultHeaders: { connection: "close" } });
    /** A step that hangs fails with what it was, instead of the suite's bare timeout. */
    const step = async <T>(what: string, pending: PromiseLike<T>): Promise<T> => {
      let timer: NodeJS.Timeout | undefined;
      try {
        return await Promise.race([
          pending,
          new Promise<never>((_resolve, reject) => {
            timer = setTimeout(() => reject(new Error(`${what} did not finish within 30 s`)), 30_000);
          }),
        ]);
      } finally {
        clearTimeout(timer);
      }
    };
    try {
      const thread = await step("threads.create", client.threads.create());
      const paused = (await step(
        "runs.wait",
        client.runs.wait(thread.thread_id, "counter", { input: { messages: [{ role: "user", content: "go" }] } }),
      )) as {
        __interrupt__?: unknown[];
      };
      assert.equal(paused.__interrupt__?.length, 1);
      assert.equal((await step("threads.get", client.threads.get(thread.thread_id))).status, "interrupted");
      const done = await step("runs.wait (resume)", client.runs.wait(thread.thread_id, "counter", { command: { resume: "yes" } }));
      assert.equal((done as { messages: { content: string }[] }).messages.at(-1)?.content, "done");
      assert.equal((await client.runs.list(thread.thread_id)).length, 2);
      // Protocol v2: its event stream on one connection, each command on a new one.
      const stream = client.threads.stream({ assistantId: "echo" });
      const values = stream.values;
      await step("run.start", stream.run.start({ input: { messages: [{ role: "user", content: "hello workers" }] } }));
      assert.equal(
        ((await step("protocol v2 values", values)) as { messages: { content: string }[] }).messages.at(-1)?.content,
        "echo: hello workers",
      );
      await step("ThreadStream.close", stream.close());
    } catch (error) {
      throw new Error(`${(error as Error).message}\nchat-serve's output:\n${server.output()}`, { cause: error });
    }
    assert.equal(await server.stop("SIGTERM"), 0);
  });

  test("one scrape returns the whole cluster: on the metrics port, and under the API path", async () => {
    const metricsPort = await freePort();
    const requestsOf = (text: string) =>
      text
        .split("\n")
        .filter((line) => line.startsWith('chat_serve_requests_total{model="echo",api="chat.completions",status="200"}'))
        .reduce((sum, line) => sum + Number(line.split(" ").at(-1)), 0);
    for (const portConfig of [`port: ${metricsPort},`, ""]) {
      const { dir, env } = project(`metrics: { enabled: true, ${portConfig} },`);
      const server = await startCli(["--workers", "2"], { cwd: dir, env });
      cleanups.push(() => void server.stop("SIGKILL"));
      try {
        // New connections each time, so both workers take requests.
        for (let index = 0; index < 8; index += 1) {
          const response = await fetch(`${server.baseURL}/chat/completions`, {
            method: "POST",
            headers: { "content-type": "application/json", connection: "close" },
            body: JSON.stringify({ model: "echo", messages: [{ role: "user", content: "hi" }] }),
          });
          assert.equal(response.status, 200);
        }
        const origin = new URL(server.baseURL).origin;
        const url = portConfig === "" ? `${origin}/metrics` : `http://127.0.0.1:${metricsPort}/metrics`;
        // Both scrapes (whichever worker answers the second) count all eight.
        for (let scrape = 0; scrape < 2; scrape += 1) {
          const text = await (await fetch(url, { headers: { connection: "close" } })).text();
          assert.equal(requestsOf(text), 8, text.slice(0, 2_000));
        }
      } finally {
        const code = await server.stop("SIGTERM");
        assert.equal(code, 0, `chat-serve exited with ${code}:\n${server.output()}`);
      }
    }
  });

  test("with no service: served when no graph keeps state, refused naming the model that does", async () => {
    const memory = tempProject({
      "chat-serve.config.ts": `export default { graphs: { echo: { graph: "./g.ts:graph", description: "x" } } };`,
      "g.ts": ECHO_GRAPH_MODULE,
    });
    cleanups.push(memory.cleanup);
    const server = await startCli(["--workers", "2"], { cwd: memory.dir });
    cleanups.push(() => void server.stop("SIGKILL"));
    assert.match(server.output(), /\(2 workers/u);
    assert.match(server.output(), /note each of the 2 workers keeps its own stored responses/u);
    // The same surface lines as one process prints, after the one ready line.
    await eventually(async () => assert.match(server.output(), /\n {2}playground +http:\/\/127\.0\.0\.1:\d+\/v1\/playground\n/u), 5_000);
    assert.match(server.output(), /\n {2}mcp +http:\/\/127\.0\.0\.1:\d+\/v1\/mcp {2}\(Streamable HTTP; no sessions/u);
    assert.match(server.output(), /\n {2}a2a +http:\/\/127\.0\.0\.1:\d+\/v1\/a2a/u);
    assert.match(server.output(), /\n {2}stored +responses and conversations in memory/u);
    assert.match(server.output(), /\n {2}langgraph +off with --workers: each worker would keep its own threads and runs/u);
    assert.equal(server.output().match(/^ {2}version/gmu)?.length, 1, "one banner, from the primary");
    // The ready line comes once both workers listen; new connections reach either.
    for (let index = 0; index < 6; index += 1) {
      const response = await fetch(`${server.baseURL}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", connection: "close" },
        body: JSON.stringify({ model: "echo", messages: [{ role: "user", content: "hi" }] }),
      });
      assert.equal(response.status, 200);
    }
    assert.equal(await server.stop("SIGTERM"), 0, server.output());

    const stateful = tempProject({
      "chat-serve.config.ts": `export default { graphs: {
  echo: { graph: "./g.ts:graph", description: "x" },
  kept: { graph: "./kept.ts:graph", description: "x", threads: true },
} };`,
      "g.ts": ECHO_GRAPH_MODULE,
      "kept.ts": ECHO_GRAPH_MODULE,
    });
    cleanups.push(stateful.cleanup);
    const result = await runCli(["start", "--port", "0", "--workers", "2"], { cwd: stateful.dir });
    assert.equal(result.code, 1);
    assert.match(result.stderr.trim(), /^error --workers 2: model 'kept' keeps state between requests \(interrupts or threads\)/u);
  });
});
