import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import OpenAI from "openai";
import { demoGraphs } from "../helpers/demo-graphs.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// `POST /v1/responses/input_tokens`: a request's input in tokens (OpenAI's o200k_base, OpenAI's
// chat framing), with what it continues, and no graph run.

let server: TestServer;
let client: OpenAI;

before(async () => {
  server = await startTestServer(demoGraphs(), { anthropic: true });
  client = new OpenAI({ baseURL: server.baseURL, apiKey: "unused", maxRetries: 0 });
});
after(() => server.close());

async function count(body: Record<string, unknown>): Promise<{ status: number; body: Record<string, any> }> {
  const response = await fetch(`${server.baseURL}/responses/input_tokens`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

describe("input tokens", () => {
  test("counts the input with OpenAI's framing: 3 per message, 3 to prime the answer", async () => {
    // "hello world" is 2 tokens and "user" 1 in o200k_base: 3 + (3 + 1 + 2).
    assert.deepEqual((await count({ model: "echo", input: "hello world" })).body, { object: "response.input_tokens", input_tokens: 9 });
    // Instructions are a system message: 3 + 1 ("system") + their tokens more.
    const instructed = await count({ model: "echo", input: "hello world", instructions: "Be brief." });
    assert.ok(instructed.body.input_tokens > 9 + 4, JSON.stringify(instructed.body));
    const tools = await count({
      model: "echo",
      input: "hello world",
      tools: [{ type: "function", name: "get_weather", description: "The weather in a city", parameters: { type: "object" } }],
    });
    assert.ok(tools.body.input_tokens > 9, JSON.stringify(tools.body));
  });

  test("counts what a previous response left, and runs nothing", async () => {
    const first = await client.responses.create({ model: "echo", input: "the first turn of a conversation" });
    const before = server.serve.activeRuns;
    const alone = await count({ model: "echo", input: "and a second" });
    const continued = await count({ model: "echo", input: "and a second", previous_response_id: first.id });
    assert.ok(continued.body.input_tokens > alone.body.input_tokens + 6, `${alone.body.input_tokens} → ${continued.body.input_tokens}`);
    assert.equal(server.serve.activeRuns, before);
    // Counting stored nothing: the first response is still the chain's last.
    const listed = await client.responses.inputItems.list(first.id);
    assert.equal(listed.data.length, 1);
  });

  test("each mistake is the API's error, before anything runs", async () => {
    const unknown = await count({ model: "nobody", input: "hi" });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, "model_not_found");
    const noModel = await count({ input: "hi" });
    assert.equal(noModel.status, 400);
    const noSuchPrevious = await count({ model: "echo", input: "hi", previous_response_id: "resp_nope" });
    assert.equal(noSuchPrevious.status, 404);
    // A GET is a stored response's path, and `input_tokens` is not a response id.
    const wrongMethod = await fetch(`${server.baseURL}/responses/input_tokens`);
    assert.equal(wrongMethod.status, 400);
  });

  test("one long unbroken run costs linear time on every counting route, and /health is not held up", async () => {
    // Byte-pair encoding is quadratic in a pre-token's length: "x" × 20,000 once took 30 s of the
    // event loop on each of these routes (and a forged compaction item on /responses/compact).
    const long = "x".repeat(20_000);
    const post = (path: string, body: unknown) =>
      fetch(`${server.origin}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    const forged = `chat-serve.compaction.v1.${Buffer.from(long).toString("base64url")}`;
    const requests: [string, unknown][] = [
      ["/v1/responses/input_tokens", { model: "echo", input: long }],
      ["/v1/messages/count_tokens", { model: "echo", messages: [{ role: "user", content: long }] }],
      [
        "/v1/responses/compact",
        {
          model: "echo",
          input: [
            { type: "compaction", encrypted_content: forged },
            { role: "user", content: long },
          ],
        },
      ],
    ];
    for (const [path, body] of requests) {
      const started = performance.now();
      const response = await post(path, body);
      const elapsed = performance.now() - started;
      assert.equal(response.status, 200, `${path}: ${await response.text()}`);
      assert.ok(elapsed < 1000, `${path} took ${elapsed.toFixed(0)} ms`);
    }
    // "x" × 8 is one token in o200k_base, and so is a run of them counted piece by piece.
    assert.equal((await count({ model: "echo", input: long })).body.input_tokens, 3 + 3 + 1 + 20_000 / 8);
    // A body near the 1 MiB limit: the count yields between slices, so /health answers meanwhile.
    const counting = post("/v1/responses/input_tokens", { model: "echo", input: "y".repeat(1_000_000) }).then(() => performance.now());
    await new Promise((resolve) => setTimeout(resolve, 20));
    const health = await fetch(`${server.baseURL}/health`);
    const healthAnswered = performance.now();
    assert.equal(health.status, 200);
    assert.ok(healthAnswered < (await counting), "the health check waited for the count to finish");
  });
});
