import assert from "node:assert/strict";
import { after, test } from "node:test";
import OpenAI from "openai";
import { startCli } from "../helpers/cli.js";
import { distributedProject } from "../helpers/distributed-project.js";
import { eventually } from "../helpers/eventually.js";
import { dropSchema, POSTGRES_URL, REDIS_URL, requirePostgres, requireRedis, uniquePrefix, uniqueSchema } from "../helpers/services.js";
import { startPostgresProxy } from "../helpers/tcp-proxy.js";

const skip = (await requirePostgres()).skip || (await requireRedis()).skip;
const cleanups: (() => unknown)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

test("Postgres going away gives 503 backend_unavailable for interrupt graphs; service returns by itself", {
  skip,
  timeout: 90_000,
}, async () => {
  const { proxy, url: viaProxyUrl } = await startPostgresProxy(POSTGRES_URL);
  cleanups.push(() => proxy.stop());
  const viaProxy = new URL(viaProxyUrl);
  const schema = uniqueSchema();
  const project = distributedProject({
    coordinator: `{ kind: "postgres", url: ${JSON.stringify(viaProxy.href)}, maxConcurrentLeases: 5 }`,
    schema,
    postgresUrl: viaProxy.href,
  });
  cleanups.push(project.cleanup, () => dropSchema(schema));
  const server = await startCli([], { cwd: project.dir, env: { COUNTER_REDIS_URL: REDIS_URL, COUNTER_KEY: `${uniquePrefix()}n` } });
  cleanups.push(() => void server.stop("SIGKILL"));
  const client = new OpenAI({ baseURL: server.baseURL, apiKey: "x", maxRetries: 0, timeout: 15_000 });
  const ask = (model: string) => client.chat.completions.create({ model, messages: [{ role: "user", content: "go" }] });

  assert.equal((await ask("counter")).choices[0]?.finish_reason, "tool_calls");

  await proxy.stop();
  const started = performance.now();
  await assert.rejects(ask("counter"), (error: InstanceType<typeof OpenAI.APIError>) => {
    assert.equal(error.status, 503, String(error));
    assert.equal(error.code, "backend_unavailable");
    return true;
  });
  assert.ok(performance.now() - started < 8_000, "refused promptly, not after a hang");
  // The replica still serves what needs no such backend: degraded, not out of the balancer; strict says 503.
  const degraded = await fetch(`${server.baseURL}/ready`);
  assert.equal(degraded.status, 200);
  assert.equal(((await degraded.json()) as { status: string }).status, "degraded");
  const ready = await fetch(`${server.baseURL}/ready?strict=true`);
  assert.equal(ready.status, 503);
  const checks = ((await ready.json()) as { checks: Record<string, string> }).checks;
  assert.equal(checks.checkpointer, "unavailable");
  assert.equal((await ask("echo")).choices[0]?.message.content, "echo: go", "graphs without interrupts keep working");

  await proxy.start();
  await eventually(async () => {
    assert.equal((await ask("counter")).choices[0]?.finish_reason, "tool_calls");
  }, 30_000);
  assert.equal(((await (await fetch(`${server.baseURL}/ready?strict=true`)).json()) as { status: string }).status, "ready");
});
