import assert from "node:assert/strict";
import { once } from "node:events";
import { after, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import OpenAI from "openai";
import { startCli } from "../helpers/cli.js";
import { COUNTING_GRAPH_MODULE } from "../helpers/distributed-project.js";
import { eventually } from "../helpers/eventually.js";
import { requireHaproxy, startHaproxy } from "../helpers/load-balancer.js";
import { freePort, startRedis } from "../helpers/private-redis.js";
import { REDIS_URL, requireRedis, uniquePrefix } from "../helpers/services.js";
import { ECHO_GRAPH_MODULE, tempProject } from "../helpers/temp-project.js";

const redisStatus = await requireRedis();
const haproxyStatus = requireHaproxy();
const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

test("stopping Redis gives 503 backend_unavailable for interrupt graphs (not a hang); starting it again restores service", {
  skip: redisStatus.skip || haproxyStatus.skip,
  timeout: 60_000,
}, async () => {
  const port = await freePort();
  let redis = await startRedis(port);
  cleanups.push(() => void redis.kill("SIGKILL"));
  const project = tempProject({
    "chat-serve.config.ts": `export default {
  coordinator: { kind: "redis", url: "redis://127.0.0.1:${port}", keyPrefix: ${JSON.stringify(uniquePrefix())} },
  graphs: {
    counter: { graph: "./graph.ts:graph", description: "counts", features: ["INTERRUPTS"] },
    echo: { graph: "./echo.ts:graph", description: "no interrupts here" },
  },
};`,
    "graph.ts": COUNTING_GRAPH_MODULE,
    "echo.ts": ECHO_GRAPH_MODULE,
  });
  cleanups.push(project.cleanup);
  const server = await startCli([], { cwd: project.dir, env: { COUNTER_REDIS_URL: REDIS_URL, COUNTER_KEY: `${uniquePrefix()}n` } });
  cleanups.push(() => void server.stop("SIGKILL"));
  const client = new OpenAI({ baseURL: server.baseURL, apiKey: "x", maxRetries: 0, timeout: 10_000 });
  const ask = (model: string) => client.chat.completions.create({ model, messages: [{ role: "user", content: "go" }] });
  // docs/production.md's HAProxy in front of it.
  const balancer = await startHaproxy([new URL(server.baseURL).host]);
  cleanups.push(() => balancer.stop());
  const throughBalancer = (model: string) =>
    fetch(`${balancer.origin}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model, messages: [{ role: "user", content: "go" }] }),
    });

  assert.equal((await ask("counter")).choices[0]?.finish_reason, "tool_calls");

  redis.kill("SIGKILL");
  await once(redis, "exit");
  const started = performance.now();
  await assert.rejects(ask("counter"), (error: InstanceType<typeof OpenAI.APIError>) => {
    assert.equal(error.status, 503);
    assert.equal(error.code, "backend_unavailable");
    return true;
  });
  assert.ok(performance.now() - started < 5_000, "refused promptly, not after a hang");
  // The replica still serves what needs no such backend: degraded, not out of the balancer; strict says 503.
  const degraded = await fetch(`${server.baseURL}/ready`);
  assert.equal(degraded.status, 200);
  assert.equal(((await degraded.json()) as { status: string }).status, "degraded");
  const ready = await fetch(`${server.baseURL}/ready?strict=true`);
  assert.equal(ready.status, 503);
  assert.deepEqual(((await ready.json()) as { checks: Record<string, string> }).checks.coordinator, "unavailable");
  // Graphs without interrupts keep working, directly and through the balancer, which keeps the
  // replica for what it serves; what needs Redis gets chat-serve's JSON 503, never HAProxy's page.
  assert.equal((await ask("echo")).choices[0]?.message.content, "echo: go");
  await sleep(1_000); // past the balancer's checks: the strict one failed, the replica is kept for what it serves
  for (let round = 0; round < 8; round += 1) {
    const echoed = await throughBalancer("echo");
    assert.equal(echoed.status, 200, await echoed.clone().text());
    const refused = await throughBalancer("counter");
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get("content-type")?.split(";")[0], "application/json");
    assert.equal(((await refused.json()) as { error: { code: string } }).error.code, "backend_unavailable");
  }

  redis = await startRedis(port);
  await eventually(async () => {
    assert.equal((await ask("counter")).choices[0]?.finish_reason, "tool_calls");
  }, 20_000);
  assert.equal(((await (await fetch(`${server.baseURL}/ready?strict=true`)).json()) as { status: string }).status, "ready");

  // No replica at all: the balancer's own 503 is JSON too.
  await server.stop("SIGKILL");
  await eventually(async () => {
    const gone = await throughBalancer("echo");
    assert.equal(gone.status, 503);
    assert.equal(gone.headers.get("content-type"), "application/json");
    const body = (await gone.json()) as { detail: string; error: { code: string } };
    assert.equal(body.error.code, "server_unavailable");
    assert.match(body.detail, /No chat-serve replica is available/u);
  }, 10_000);
});
