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
