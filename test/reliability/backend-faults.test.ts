import assert from "node:assert/strict";
import { once } from "node:events";
import { after, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { AIMessage } from "@langchain/core/messages";
import { END, interrupt, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ChatServe } from "../../src/app/chat-serve.js";
import { createPostgresPool } from "../../src/coordination/postgres-pool.js";
import { PostgresRunCoordinator } from "../../src/coordination/postgres-run-coordinator.js";
import { GraphRegistry } from "../../src/registry/graph-registry.js";
import { checkpointKey } from "../../src/runs/interrupts/checkpoint-key.js";
import { type Backends, backendsFromConfig } from "../../src/server/backends.js";
import { counterGraph } from "../fixtures/interrupt-graphs.js";
import { eventually } from "../helpers/eventually.js";
import { freePort, startRedis } from "../helpers/private-redis.js";
import { dropSchema, POSTGRES_URL, REDIS_URL, requirePostgres, requireRedis, uniquePrefix, uniqueSchema } from "../helpers/services.js";
import { startPostgresProxy, TcpProxy } from "../helpers/tcp-proxy.js";

const postgres = await requirePostgres();
const redis = await requireRedis();
const TIMEOUT_MS = 1_000;

const cleanups: (() => unknown)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function postgresProxy(): Promise<{ proxy: TcpProxy; url: string }> {
  const started = await startPostgresProxy(POSTGRES_URL);
  cleanups.push(() => started.proxy.stop());
  return started;
}

/** Postgres checkpointer and coordinator, both reached through a proxy the test controls. */
async function postgresBackendsBehindProxy(): Promise<{ proxy: TcpProxy; backends: Backends }> {
  const { proxy, url } = await postgresProxy();
  const schema = uniqueSchema();
  cleanups.push(() => dropSchema(schema));
  const backends = await backendsFromConfig(
    {
      checkpointer: { kind: "postgres", url, schema },
      coordinator: { kind: "postgres", url, maxConcurrentLeases: 4, leaseTimeoutMs: 30_000 },
    },
    { timeoutMs: TIMEOUT_MS },
  );
  cleanups.push(() => backends.close());
  await backends.setup();
  return { proxy, backends };
}

/** ask (interrupts) -> wait (holds the run until the test opens the gate) -> answer. */
function gatedGraph(gate: { opened: Promise<void>; reached: () => void }) {
  return new StateGraph(MessagesAnnotation)
    .addNode("ask", () => ({ messages: [new AIMessage(`answer: ${JSON.stringify(interrupt({ question: "Proceed?" }))}`)] }))
    .addNode("wait", async () => {
      gate.reached();
      await gate.opened;
      return {};
    })
    .addEdge(START, "ask")
    .addEdge("ask", "wait")
    .addEdge("wait", END)
    .compile();
}

async function serve(
  backends: Pick<Backends, "checkpointer" | "runCoordinator" | "pendingRuns">,
  graphs: Record<string, unknown>,
  checks = {},
) {
  const registry = new GraphRegistry(
    Object.fromEntries(
      Object.entries(graphs).map(([name, graph]) => [name, { graph, description: name, features: ["INTERRUPTS"] }]),
    ) as never,
    { checkpointer: backends.checkpointer, runCoordinator: backends.runCoordinator, pendingRuns: backends.pendingRuns },
  );
  const chatServe = new ChatServe({ graphs: registry, backendTimeoutMs: TIMEOUT_MS, ...checks });
  const app = await chatServe.bind();
  const origin = await app.listen({ host: "127.0.0.1", port: 0 });
  cleanups.push(() => app.close());
  return { origin, chatServe };
}

async function chat(origin: string, model: string, messages: unknown[]) {
  const response = await fetch(`${origin}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model, messages }),
  });
  return { status: response.status, body: (await response.json()) as any };
}

function resumeMessages(paused: any, answer = "yes") {
  const calls = paused.choices[0].message.tool_calls;
  return [
    { role: "user", content: "go" },
    { role: "assistant", content: null, tool_calls: calls },
    ...calls.map((call: { id: string }) => ({ role: "tool", tool_call_id: call.id, content: answer })),
  ];
}

/**
 * Interrupt requests answer 503 within the deadline (and a second), with no internals in the
 * message; /ready says `degraded` (the replica still serves what needs no such backend) and
 * /ready?strict=true 503, each within the deadline. Returns the strict response.
 */
async function assertRefusedWithinDeadline(origin: string): Promise<Response> {
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const started = performance.now();
    const refused = await chat(origin, "counter", [{ role: "user", content: "go" }]);
    const elapsed = performance.now() - started;
    assert.equal(refused.status, 503, JSON.stringify(refused.body));
    assert.equal(refused.body.error.code, "backend_unavailable");
    assert.ok(!JSON.stringify(refused.body).includes("timeout"), "no internals in the message");
    assert.ok(elapsed < TIMEOUT_MS + 1_000, `answered in ${Math.round(elapsed)} ms`);
  }
  const started = performance.now();
  const ready = await fetch(`${origin}/v1/ready`);
  assert.ok(performance.now() - started < TIMEOUT_MS + 1_000, "/ready answered within the deadline");
  assert.equal(ready.status, 200);
  assert.equal(((await ready.json()) as { status: string }).status, "degraded");
  const strict = await fetch(`${origin}/v1/ready?strict=true`);
  assert.equal(strict.status, 503);
  return strict;
}

describe("Postgres faults", { skip: postgres.skip }, () => {
  test("a connection reset while a lease holds a checked-out client leaves the process serving; the run gets 503", async () => {
    const { proxy, backends } = await postgresBackendsBehindProxy();
    let reached!: () => void;
    const reachedWait = new Promise<void>((resolve) => (reached = resolve));
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    cleanups.push(() => open());
    const { origin } = await serve(backends, { gated: gatedGraph({ opened, reached }) });

    const paused = await chat(origin, "gated", [{ role: "user", content: "go" }]);
    assert.equal(paused.status, 200, JSON.stringify(paused.body));
    const resumed = chat(origin, "gated", resumeMessages(paused.body));
    await reachedWait;
    // The lease's client is checked out and idle in pg_try_advisory_lock's session; reset it.
    proxy.reset();
    const answer = await resumed;
    assert.equal(answer.status, 503, JSON.stringify(answer.body));
    assert.equal(answer.body.error.code, "backend_unavailable");
    open();

    // Still serving, and the backends recover by themselves.
    await eventually(async () => {
      const again = await chat(origin, "gated", [{ role: "user", content: "go" }]);
      assert.equal(again.status, 200, JSON.stringify(again.body));
    }, 10_000);
    assert.equal((backends.runCoordinator as PostgresRunCoordinator).activeLeases, 0, "no lease left held");
  });

  test("a stalled Postgres (packets dropped) gives 503 within the deadline, on requests and /ready, and service comes back", async () => {
    const { proxy, backends } = await postgresBackendsBehindProxy();
    const counter = { before: 0, after: 0 };
    const { origin } = await serve(
      backends,
      { counter: counterGraph(counter) },
      {
        readinessChecks: [{ name: "checkpointer", check: backends.checkpointerCheck! }],
      },
    );
    assert.equal((await chat(origin, "counter", [{ role: "user", content: "go" }])).status, 200);

    proxy.blackhole();
    const ready = await assertRefusedWithinDeadline(origin);
    const checks = ((await ready.json()) as { checks: Record<string, string> }).checks;
    assert.equal(checks.checkpointer, "unavailable");
    assert.equal(checks.coordinator, "unavailable");

    proxy.restore();
    await eventually(async () => {
      assert.equal((await chat(origin, "counter", [{ role: "user", content: "go" }])).status, 200);
      assert.equal(((await (await fetch(`${origin}/v1/ready`)).json()) as { status: string }).status, "ready");
    }, 15_000);
    await eventually(async () => assert.equal((backends.runCoordinator as PostgresRunCoordinator).activeLeases, 0), 5_000);
  });

  test("a lease holder that vanishes without closing its connection loses the lock within the lease timeout", async () => {
    const { proxy, url } = await postgresProxy();
    const holderPool = createPostgresPool({ url, max: 3, timeoutMs: TIMEOUT_MS });
    const otherPool = createPostgresPool({ url: POSTGRES_URL, max: 3, timeoutMs: TIMEOUT_MS });
    cleanups.push(
      () => holderPool.end(),
      () => otherPool.end(),
    );
    const holder = new PostgresRunCoordinator({ pool: holderPool, maxConcurrentLeases: 2, leaseTimeoutMs: 1_000 });
    const other = new PostgresRunCoordinator({ pool: otherPool, maxConcurrentLeases: 2, leaseTimeoutMs: 1_000 });
    const key = checkpointKey(uniquePrefix(), "model", "00000000-0000-4000-8000-000000000001");

    const lease = await holder.tryAcquire(key);
    assert.ok(lease);
    cleanups.push(() => lease.release());
    await sleep(1_500);
    assert.equal(await other.tryAcquire(key), null, "a live holder keeps its lease past the timeout: the heartbeat works");

    // The holder's host drops off the network: Postgres hears nothing more from its session.
    proxy.blackhole();
    const started = performance.now();
    let taken: Awaited<ReturnType<typeof other.tryAcquire>> = null;
    await eventually(
      async () => {
        taken = await other.tryAcquire(key);
        assert.ok(taken, "another process takes the run");
      },
      10_000,
      100,
    );
    const elapsed = performance.now() - started;
    assert.ok(elapsed < 1_000 + 3_000, `taken over after ${Math.round(elapsed)} ms`);
    await eventually(async () => assert.equal(lease.signal.aborted, true, "the holder learns it lost the lease"), 5_000);
    await (taken as unknown as { release(): Promise<void> }).release();
    proxy.restore();
    await lease.release();
    assert.equal(holder.activeLeases, 0);
    assert.equal(other.activeLeases, 0);
  });

  test("16 simultaneous resumes of one run on one process: one 200, fifteen 409 run_busy", async () => {
    const pool = createPostgresPool({ url: POSTGRES_URL, max: 5, timeoutMs: TIMEOUT_MS });
    cleanups.push(() => pool.end());
    const coordinator = new PostgresRunCoordinator({ pool, maxConcurrentLeases: 4 });
    const counter = { before: 0, after: 0 };
    const { origin } = await serve(
      { checkpointer: new MemorySaver(), runCoordinator: coordinator, pendingRuns: undefined as never },
      { counter: counterGraph(counter, { afterDelayMs: 500 }) },
    );
    const paused = await chat(origin, "counter", [{ role: "user", content: "go" }]);
    const answers = await Promise.all(Array.from({ length: 16 }, () => chat(origin, "counter", resumeMessages(paused.body))));
    const statuses = answers.map((answer) => answer.status).sort();
    assert.deepEqual(
      statuses,
      [200, ...Array.from({ length: 15 }, () => 409)],
      JSON.stringify(answers.map((answer) => answer.body.error?.code)),
    );
    assert.ok(answers.filter((answer) => answer.status === 409).every((answer) => answer.body.error.code === "run_busy"));
    assert.equal(counter.after, 1);
    assert.equal(coordinator.activeLeases, 0);
  });
});

describe("Redis faults", { skip: redis.skip }, () => {
  test("a paused Redis (SIGSTOP) gives 503 within the deadline on requests and /ready; SIGCONT restores service", async () => {
    const port = await freePort();
    const server = await startRedis(port);
    cleanups.push(async () => {
      server.kill("SIGCONT");
      server.kill("SIGKILL");
      if (server.exitCode === null) await once(server, "exit");
    });
    const backends = await backendsFromConfig(
      {
        checkpointer: { kind: "memory" },
        coordinator: { kind: "redis", url: `redis://127.0.0.1:${port}`, leaseTtlMs: 5_000, keyPrefix: uniquePrefix() },
      },
      { timeoutMs: TIMEOUT_MS },
    );
    cleanups.push(() => backends.close());
    const counter = { before: 0, after: 0 };
    const { origin } = await serve(backends, { counter: counterGraph(counter) });
    assert.equal((await chat(origin, "counter", [{ role: "user", content: "go" }])).status, 200);

    server.kill("SIGSTOP");
    const ready = await assertRefusedWithinDeadline(origin);
    assert.equal(((await ready.json()) as { checks: Record<string, string> }).checks.coordinator, "unavailable");

    server.kill("SIGCONT");
    await eventually(async () => {
      assert.equal((await chat(origin, "counter", [{ role: "user", content: "go" }])).status, 200);
      assert.equal(((await (await fetch(`${origin}/v1/ready`)).json()) as { status: string }).status, "ready");
    }, 15_000);
  });
});

describe("connections a load balancer forgot while idle", { skip: postgres.skip || redis.skip }, () => {
  test("are replaced: the request that finds one is answered, on Postgres and on Redis, reset or silent", async () => {
    const { proxy: postgresProxyOf, url } = await postgresProxy();
    const redisTarget = new URL(REDIS_URL);
    const redisProxy = new TcpProxy(redisTarget.hostname, Number(redisTarget.port || 6379));
    await redisProxy.start();
    cleanups.push(() => redisProxy.stop());
    const schema = uniqueSchema();
    cleanups.push(() => dropSchema(schema));
    const backends = await backendsFromConfig(
      {
        checkpointer: { kind: "postgres", url, schema },
        coordinator: { kind: "redis", url: `redis://127.0.0.1:${redisProxy.port}`, leaseTtlMs: 5_000, keyPrefix: uniquePrefix() },
      },
      { timeoutMs: TIMEOUT_MS },
    );
    cleanups.push(() => backends.close());
    await backends.setup();
    const counter = { before: 0, after: 0 };
    const { origin } = await serve(backends, { counter: counterGraph(counter) });
    for (const silently of [false, true]) {
      const paused = await chat(origin, "counter", [{ role: "user", content: "go" }]);
      assert.equal(paused.status, 200, JSON.stringify(paused.body));
      // Every open connection, to both services, is reset the next time it is used (or, silently,
      // swallows what is sent on it without a word).
      postgresProxyOf.forget({ silently });
      redisProxy.forget({ silently });
      await sleep(1_100);
      const done = await chat(origin, "counter", resumeMessages(paused.body));
      assert.equal(done.status, 200, JSON.stringify(done.body));
    }
    assert.equal(counter.after, 2);
  });
});
