import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { FastifyInstance } from "fastify";
import { echoGraph } from "../fixtures/graphs.js";
import { assertMatchesOpenAI } from "../helpers/openai-schema.js";
import { buildTestApp } from "../helpers/server.js";

let app: FastifyInstance;
before(async () => {
  ({ app } = await buildTestApp({ echo: { graph: echoGraph(), description: "Echo" } }));
});
after(() => app.close());

test("GET / on an app chat-serve created says where the API is", async () => {
  const response = await app.inject({ method: "GET", url: "/" });
  assert.equal(response.statusCode, 200);
  assert.match(response.json().message, /GET \/v1\/models/u);
});

test("an API path without the prefix names the right URL", async () => {
  for (const [method, url] of [
    ["POST", "/chat/completions"],
    ["GET", "/models"],
    ["POST", "/responses"],
  ] as const) {
    const response = await app.inject({ method, url, payload: method === "POST" ? {} : undefined });
    assert.equal(response.statusCode, 404);
    const body = response.json();
    assertMatchesOpenAI("ErrorResponse", body);
    assert.equal(body.error.code, "unknown_url");
    assert.ok(body.error.message.includes(`Did you mean /v1${url}?`), body.error.message);
    assert.ok(response.headers["x-request-id"]);
  }
  const elsewhere = (await app.inject({ method: "GET", url: "/favicon.ico" })).json();
  assert.match(elsewhere.error.message, /The API is under \/v1\./u);
});

test("an unknown model is named with a did-you-mean and the models that exist", async () => {
  const response = await app.inject({
    method: "POST",
    url: "/v1/chat/completions",
    payload: { model: "ehco", messages: [{ role: "user", content: "x" }] },
  });
  assert.equal(response.statusCode, 404);
  const body = response.json();
  assertMatchesOpenAI("ErrorResponse", body);
  assert.equal(body.error.message, "The model 'ehco' does not exist; did you mean 'echo'? The models here: echo. GET /models lists them.");
  const far = (await app.inject({ method: "GET", url: "/v1/models/zzzzzz" })).json();
  assert.equal(far.error.message, "The model 'zzzzzz' does not exist. The models here: echo. GET /models lists them.");
  // A 3,000-character name from the request is not echoed whole.
  const long = "m".repeat(3_000);
  const huge = await app.inject({
    method: "POST",
    url: "/v1/chat/completions",
    payload: { model: long, messages: [{ role: "user", content: "x" }] },
  });
  assert.equal(huge.statusCode, 404);
  assert.equal(
    huge.json().error.message,
    `The model '${"m".repeat(100)}…' (3000 characters) does not exist. The models here: echo. GET /models lists them.`,
  );
});

test("a body that is not JSON says where it went wrong", async () => {
  const response = await app.inject({
    method: "POST",
    url: "/v1/chat/completions",
    headers: { "content-type": "application/json" },
    payload: '{\n  "model": "echo",\n  "messages": [}\n}',
  });
  assert.equal(response.statusCode, 400);
  const body = response.json();
  assertMatchesOpenAI("ErrorResponse", body);
  assert.match(body.error.message, /^The request body is not valid JSON: .+ \(line 3, column 16\)\.$/u);
  const proto = await app.inject({
    method: "POST",
    url: "/v1/chat/completions",
    headers: { "content-type": "application/json" },
    payload: '{"model":"echo","messages":[{"role":"user","content":"x"}],"__proto__":{"polluted":true}}',
  });
  assert.equal(proto.statusCode, 400, "prototype keys are still refused");
});
