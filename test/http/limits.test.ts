import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import OpenAI from "openai";
import { type AbortProbe, echoGraph, slowGraph } from "../fixtures/graphs.js";
import { assertMatchesOpenAI } from "../helpers/openai-schema.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { REDIS_URL, requireRedis, uniquePrefix } from "../helpers/services.js";

const redisAvailable = await requireRedis();
const ACME = "sk-acme-0123456789abcdef";
const BETA = "sk-beta-0123456789abcdef";
const auth = {
  keys: [
    { tenant: "acme", key: ACME },
    { tenant: "beta", key: BETA },
  ],
};
const probe = (): AbortProbe => ({ started: false, chunks: 0, aborted: false, finished: false });

const servers: TestServer[] = [];
after(async () => {
  for (const server of servers) await server.close();
});

async function serve(...args: Parameters<typeof startTestServer>): Promise<TestServer> {
  const server = await startTestServer(...args);
  servers.push(server);
  return server;
}

function post(server: TestServer, key: string, body: Record<string, unknown>) {
  return fetch(`${server.baseURL}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({ messages: [{ role: "user", content: "hi" }], ...body }),
  });
}

describe("requests per window", () => {
  test("a background submission counts against the request rate too", async () => {
    const server = await serve({ echo: { graph: echoGraph(), description: "Echo" } }, { auth, limits: { requestsPerMinute: 2 } });
    const client = new OpenAI({ baseURL: server.baseURL, apiKey: ACME, maxRetries: 0 });
    for (let index = 0; index < 2; index += 1) await client.responses.create({ model: "echo", input: "x", background: true });
    await assert.rejects(
      client.responses.create({ model: "echo", input: "x", background: true }),
      (error: InstanceType<typeof OpenAI.APIError>) => error.status === 429 && error.code === "rate_limit_exceeded",
    );
  });

  test("over the limit is a 429 rate_limit_exceeded with Retry-After and OpenAI's headers; each tenant counts alone", async () => {
    const server = await serve(
      { echo: { graph: echoGraph(), description: "Echo" }, other: { graph: echoGraph(), description: "Other" } },
      { auth, limits: { requestsPerMinute: 3 } },
    );
    const remaining: string[] = [];
    for (let index = 0; index < 3; index += 1) {
      const response = await post(server, ACME, { model: index === 1 ? "other" : "echo" });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get("x-ratelimit-limit-requests"), "3");
      assert.match(response.headers.get("x-ratelimit-reset-requests") ?? "", /^\d+s$/u);
      remaining.push(response.headers.get("x-ratelimit-remaining-requests")!);
    }
    assert.deepEqual(remaining, ["2", "1", "0"], "models without limits of their own share the tenant's");
    const refused = await post(server, ACME, { model: "echo" });
    assert.equal(refused.status, 429);
    const retryAfter = Number(refused.headers.get("retry-after"));
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
    assert.equal(refused.headers.get("x-ratelimit-remaining-requests"), "0");
    const body = (await refused.json()) as { error: { code: string; type: string; message: string } };
    assertMatchesOpenAI("ErrorResponse", body);
    assert.equal(body.error.code, "rate_limit_exceeded");
    assert.equal(body.error.type, "requests");
    assert.match(body.error.message, /^Rate limit reached for requests: 3 per minute\. Retry in \d+s\.$/u);
    // Another tenant has its own counter.
    assert.equal((await post(server, BETA, { model: "echo" })).status, 200);
    // Listing models is not a run and is not counted.
    assert.equal((await fetch(`${server.baseURL}/models`, { headers: { authorization: `Bearer ${ACME}` } })).status, 200);
  });

  test("a model with a limit of its own counts apart from the tenant's", async () => {
    const server = await serve(
      { echo: { graph: echoGraph(), description: "Echo" }, research: { graph: echoGraph(), description: "Research" } },
      { auth, limits: { requestsPerMinute: 5, perModel: { research: { requestsPerMinute: 1 } } } },
    );
    assert.equal((await post(server, ACME, { model: "research" })).status, 200);
    const refused = await post(server, ACME, { model: "research" });
    assert.equal(refused.status, 429);
    assert.match(((await refused.json()) as { error: { message: string } }).error.message, /requests on model 'research': 1 per minute/u);
    const echo = await post(server, ACME, { model: "echo" });
    assert.equal(echo.status, 200);
    assert.equal(echo.headers.get("x-ratelimit-remaining-requests"), "4");
  });

  test("without auth each client address is its own tenant", async () => {
    const server = await serve({ echo: { graph: echoGraph(), description: "Echo" } }, { limits: { requestsPerMinute: 1 } });
    const client = new OpenAI({ baseURL: server.baseURL, apiKey: "unused", maxRetries: 0 });
    await client.chat.completions.create({ model: "echo", messages: [{ role: "user", content: "hi" }] });
    await assert.rejects(
      client.chat.completions.create({ model: "echo", messages: [{ role: "user", content: "hi" }] }),
      OpenAI.RateLimitError,
    );
  });

  test("the openai SDK's retry waits for Retry-After, then succeeds", async () => {
    const server = await serve(
      { echo: { graph: echoGraph(), description: "Echo" } },
      { limits: { requestsPerMinute: 1, windowMs: 1_000 } },
    );
    const client = new OpenAI({ baseURL: server.baseURL, apiKey: "unused", maxRetries: 2 });
    const ask = () => client.chat.completions.create({ model: "echo", messages: [{ role: "user", content: "again" }] });
    await ask();
    const started = performance.now();
    const retried = await ask();
    assert.equal(retried.choices[0]?.message.content, "again");
    assert.ok(performance.now() - started >= 900, "the retry waited for the window to pass");
  });
});

describe("concurrent runs", () => {
  test("a run over the tenant's concurrent runs is a 429; its slot comes back when a run ends", async () => {
    const probes = [probe(), probe()];
    const server = await serve(
      {
        slow: { graph: slowGraph(probes[0]!), description: "slow", streamableNodeNames: ["respond"] },
        echo: { graph: echoGraph(), description: "Echo" },
      },
      { auth, limits: { concurrentRuns: 1 } },
    );
    const controller = new AbortController();
    const running = await fetch(`${server.baseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${ACME}` },
      body: JSON.stringify({ model: "slow", stream: true, messages: [{ role: "user", content: "go" }] }),
      signal: controller.signal,
    });
    assert.equal(running.status, 200);
    const refused = await post(server, ACME, { model: "echo" });
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get("retry-after"), "1");
    assert.match(
      ((await refused.json()) as { error: { message: string } }).error.message,
      /^Too many runs in flight for this tenant: at most 1 at once\./u,
    );
    assert.equal((await post(server, BETA, { model: "echo" })).status, 200, "another tenant has its own slots");
    controller.abort();
    await running.body?.cancel().catch(() => {});
    await server.serve.runsSettled();
    assert.equal((await post(server, ACME, { model: "echo" })).status, 200, "the slot came back");
  });
});

describe("counters in Redis", { skip: redisAvailable.skip }, () => {
  test("two servers sharing one Redis share one request limit and one concurrent-run limit", async () => {
    const keyPrefix = uniquePrefix();
    const clients = [new Redis(REDIS_URL), new Redis(REDIS_URL)];
    const slow = probe();
    try {
      const [first, second] = await Promise.all(
        clients.map((redis) =>
          serve(
            {
              echo: { graph: echoGraph(), description: "Echo" },
              slow: { graph: slowGraph(slow), description: "slow", streamableNodeNames: ["respond"] },
            },
            { auth, limits: { requestsPerMinute: 4, perModel: { slow: { concurrentRuns: 1 } }, redis, keyPrefix } },
          ),
        ),
      );
      const statuses: number[] = [];
      for (let index = 0; index < 8; index += 1)
        statuses.push((await post(index % 2 === 0 ? first! : second!, ACME, { model: "echo" })).status);
      assert.deepEqual(statuses, [200, 200, 200, 200, 429, 429, 429, 429]);
      // One slow run on the first server holds the only slot for both.
      const controller = new AbortController();
      const running = await fetch(`${first!.baseURL}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${BETA}` },
        body: JSON.stringify({ model: "slow", stream: true, messages: [{ role: "user", content: "go" }] }),
        signal: controller.signal,
      });
      assert.equal(running.status, 200);
      assert.equal((await post(second!, BETA, { model: "slow", stream: true })).status, 429);
      controller.abort();
      await running.body?.cancel().catch(() => {});
      await first!.serve.runsSettled();
      await sleep(50);
      assert.equal(await clients[0]!.zcard(`${keyPrefix}runs:tenant:beta|model:slow`), 0, "the slot was given back in Redis");
    } finally {
      const keys = await clients[0]!.keys(`${keyPrefix}*`);
      if (keys.length > 0) await clients[0]!.del(...keys);
      for (const client of clients) client.disconnect();
    }
  });
});
