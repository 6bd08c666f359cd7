import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { FastifyInstance } from "fastify";
import { echoGraph } from "../fixtures/graphs.js";
import { buildTestApp } from "../helpers/server.js";

const ORIGIN = "https://app.example.com";
const KEY = "sk-cors-0123456789abcdef";
let app: FastifyInstance;
before(async () => {
  ({ app } = await buildTestApp(
    { echo: { graph: echoGraph(), description: "Echo" } },
    { cors: { origins: [ORIGIN] }, auth: { keys: [{ tenant: "web", key: KEY }] } },
  ));
});
after(() => app.close());

const preflight = (origin: string) =>
  app.inject({
    method: "OPTIONS",
    url: "/v1/chat/completions",
    headers: {
      origin,
      "access-control-request-method": "POST",
      // What the openai SDK sends from a browser.
      "access-control-request-headers": "authorization,content-type,x-stainless-os",
    },
  });

test("a preflight from an allowed origin is answered, without a key, allowing the SDK's headers", async () => {
  const response = await preflight(ORIGIN);
  assert.equal(response.statusCode, 204);
  assert.equal(response.headers["access-control-allow-origin"], ORIGIN);
  assert.match(response.headers["access-control-allow-methods"] as string, /POST/u);
  assert.match(response.headers["access-control-allow-headers"] as string, /authorization/u);
  assert.match(response.headers["access-control-allow-headers"] as string, /x-stainless-os/u);
});

test("another origin gets no CORS headers", async () => {
  const response = await preflight("https://evil.example.net");
  assert.equal(response.headers["access-control-allow-origin"], undefined);
  const request = await app.inject({
    method: "GET",
    url: "/v1/models",
    headers: { origin: "https://evil.example.net", authorization: `Bearer ${KEY}` },
  });
  assert.equal(request.headers["access-control-allow-origin"], undefined);
});

test("an allowed origin's request carries the CORS headers and exposes the request id, on errors too", async () => {
  const ok = await app.inject({
    method: "POST",
    url: "/v1/chat/completions",
    headers: { origin: ORIGIN, authorization: `Bearer ${KEY}` },
    payload: { model: "echo", messages: [{ role: "user", content: "hi" }] },
  });
  assert.equal(ok.statusCode, 200);
  assert.equal(ok.headers["access-control-allow-origin"], ORIGIN);
  assert.match(ok.headers["access-control-expose-headers"] as string, /x-request-id/u);
  const refused = await app.inject({ method: "GET", url: "/v1/models", headers: { origin: ORIGIN } });
  assert.equal(refused.statusCode, 401);
  assert.equal(refused.headers["access-control-allow-origin"], ORIGIN, "a browser client can read the 401");
});

test("without server.cors there are no CORS headers", async () => {
  const { app: plain } = await buildTestApp({ echo: { graph: echoGraph(), description: "Echo" } });
  try {
    const response = await plain.inject({ method: "GET", url: "/v1/models", headers: { origin: ORIGIN } });
    assert.equal(response.headers["access-control-allow-origin"], undefined);
  } finally {
    await plain.close();
  }
});
