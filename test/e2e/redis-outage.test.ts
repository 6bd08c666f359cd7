import assert from "node:assert/strict";
import { once } from "node:events";
import { after, test } from "node:test";
import OpenAI from "openai";
import { startCli } from "../helpers/cli.js";
import { COUNTING_GRAPH_MODULE } from "../helpers/distributed-project.js";
import { eventually } from "../helpers/eventually.js";
import { freePort, startRedis } from "../helpers/private-redis.js";
import { REDIS_URL, requireRedis, uniquePrefix } from "../helpers/services.js";
import { ECHO_GRAPH_MODULE, tempProject } from "../helpers/temp-project.js";

const redisStatus = await requireRedis();
const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

test("stopping Redis gives 503 backend_unavailable for interrupt graphs (not a hang); starting it again restores service", {
  skip: redisStatus.skip,
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
  const ready = await fetch(`${server.baseURL}/ready`);
  assert.equal(ready.status, 503);
  assert.deepEqual(((await ready.json()) as { checks: Record<string, string> }).checks.coordinator, "unavailable");
  // Graphs without interrupts keep working.
  assert.equal((await ask("echo")).choices[0]?.message.content, "echo: go");

  redis = await startRedis(port);
  await eventually(async () => {
    assert.equal((await ask("counter")).choices[0]?.finish_reason, "tool_calls");
  }, 20_000);
  assert.equal((await fetch(`${server.baseURL}/ready`)).status, 200);
});
