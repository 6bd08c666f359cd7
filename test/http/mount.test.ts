import assert from "node:assert/strict";
import { once } from "node:events";
import { connect } from "node:net";
import { test } from "node:test";
import Fastify from "fastify";
import { ChatServe } from "../../src/app/chat-serve.js";
import { missingHostHook } from "../../src/http/framework-errors.js";
import { GraphRegistry } from "../../src/registry/graph-registry.js";
import { echoGraph } from "../fixtures/graphs.js";

test("mounting into a host app leaves its routes, hooks and error handler untouched", async () => {
  const host = Fastify();
  const seenByHostHook: string[] = [];
  host.addHook("onRequest", async (request) => {
    seenByHostHook.push(request.url);
  });
  host.setErrorHandler((error: Error, _request, reply) => reply.status(418).send({ host: "handled", message: error.message }));
  host.setNotFoundHandler((_request, reply) => reply.status(404).send({ host: "not found" }));
  host.get("/", async () => ({ home: true }));
  host.get("/boom", async () => {
    throw new Error("host failure");
  });

  const serve = new ChatServe({
    app: host,
    graphs: new GraphRegistry({ echo: { graph: echoGraph, description: "Echo", streamableNodeNames: ["respond"] } }),
  });
  const returned = await serve.bind({ prefix: "/api/openai/" });
  assert.equal(returned, host);
  await host.ready();

  // The host's own routes, error handler and 404 handler behave as before.
  assert.deepEqual((await host.inject("/")).json(), { home: true });
  const boom = await host.inject("/boom");
  assert.equal(boom.statusCode, 418);
  assert.deepEqual(boom.json(), { host: "handled", message: "host failure" });
  const missing = await host.inject("/nowhere");
  assert.deepEqual(missing.json(), { host: "not found" });
  // The service's hooks do not leak onto host routes.
  assert.equal((await host.inject("/")).headers["x-request-id"], undefined);
  // No unprefixed /health is added to an app chat-serve did not create.
  assert.deepEqual((await host.inject("/health")).json(), { host: "not found" });

  // The mounted app answers under the normalized prefix, with its own error format.
  const models = await host.inject("/api/openai/models");
  assert.equal(models.statusCode, 200);
  assert.equal(models.json().data[0].id, "echo");
  assert.ok(models.headers["x-request-id"]);
  const unknown = await host.inject("/api/openai/unknown");
  assert.equal(unknown.json().error.code, "unknown_url");
  // A wrong method on a known path is 405 from the mount's own not-found handler.
  const wrongMethod = await host.inject({ method: "DELETE", url: "/api/openai/chat/completions?x=1" });
  assert.equal(wrongMethod.statusCode, 405);
  assert.equal(wrongMethod.headers.allow, "POST");
  assert.equal(wrongMethod.json().error.code, "method_not_allowed");
  const completion = await host.inject({
    method: "POST",
    url: "/api/openai/chat/completions",
    payload: { model: "echo", messages: [{ role: "user", content: "mounted" }] },
  });
  assert.equal(completion.json().choices[0].message.content, "mounted");
  // The host's hooks still apply to everything it serves, the mounted app included.
  assert.ok(seenByHostHook.includes("/api/openai/models"));
  // The encapsulated instance is exposed for instrumentation.
  assert.notEqual(serve.openaiApp, host);
  assert.equal(serve.openaiApp.prefix, "/api/openai");
  await host.close();
});

test("the Agent Protocol at the root of a host app: wrong methods are 405 in its shape, other URLs stay the host's", async () => {
  const host = Fastify();
  host.setNotFoundHandler((_request, reply) => reply.status(404).send({ host: "not found" }));
  const serve = new ChatServe({ app: host, graphs: new GraphRegistry({ echo: { graph: echoGraph, description: "Echo" } }) });
  await serve.bind({ prefix: "/v1", langgraph: true });
  const wrongMethod = await host.inject({ method: "PUT", url: "/assistants/search" });
  assert.equal(wrongMethod.statusCode, 405);
  assert.equal(wrongMethod.headers.allow, "POST");
  assert.match(wrongMethod.json().detail, /does not accept PUT/u);
  assert.deepEqual((await host.inject("/nowhere")).json(), { host: "not found" });
  await host.close();
});

test("ChatServe requires a GraphRegistry", () => {
  assert.throws(() => new ChatServe({ graphs: { echo: {} } as never }), TypeError);
  assert.throws(() => new ChatServe({} as never), TypeError);
});

test("the prefix comes from SVC_CHAT_API_PREFIX when bind() is given none, and must start with /", async () => {
  const registry = () => new GraphRegistry({ echo: { graph: echoGraph, description: "Echo" } });
  process.env.SVC_CHAT_API_PREFIX = "/from-env/";
  try {
    const app = await new ChatServe({ graphs: registry() }).bind();
    assert.equal((await app.inject("/from-env/models")).statusCode, 200);
    await app.close();
    process.env.SVC_CHAT_API_PREFIX = "no-slash";
    await assert.rejects(new ChatServe({ graphs: registry() }).bind(), /must start with '\/'/);
  } finally {
    delete process.env.SVC_CHAT_API_PREFIX;
  }
  await assert.rejects(new ChatServe({ graphs: registry() }).bind({ prefix: "v2" }), /must start with '\/'/);
});

test("hooks added to openaiApp after bind() guard the mounted app only (authentication, say)", async () => {
  const host = Fastify();
  host.get("/", async () => ({ open: true }));
  const serve = new ChatServe({ app: host, graphs: new GraphRegistry({ echo: { graph: echoGraph, description: "Echo" } }) });
  await serve.bind({ prefix: "/openai/v1" });
  serve.openaiApp.addHook("onRequest", async (request, reply) => {
    if (request.headers.authorization !== "Bearer secret") {
      return reply
        .code(401)
        .send({ error: { message: "Invalid API key.", type: "invalid_request_error", param: null, code: "invalid_api_key" } });
    }
  });
  await host.ready();
  const refused = await host.inject("/openai/v1/models");
  assert.equal(refused.statusCode, 401);
  assert.ok(refused.headers["x-request-id"], "the service's own hooks ran first");
  assert.equal((await host.inject({ url: "/openai/v1/models", headers: { authorization: "Bearer secret" } })).statusCode, 200);
  assert.equal((await host.inject("/")).statusCode, 200);
  await host.close();
});

test("a host app of your own answers a request without a Host header in the envelope, with missingHostHook", async () => {
  const host = Fastify({ http: { requireHostHeader: false } });
  host.addHook("onRequest", missingHostHook);
  await new ChatServe({ app: host, graphs: new GraphRegistry({ echo: { graph: echoGraph, description: "Echo" } }) }).bind();
  const origin = await host.listen({ host: "127.0.0.1", port: 0 });
  try {
    const socket = connect(Number(new URL(origin).port), "127.0.0.1");
    await once(socket, "connect");
    let raw = "";
    socket.on("data", (data: Buffer) => (raw += data.toString()));
    socket.write("GET /v1/models HTTP/1.1\r\nConnection: close\r\n\r\n");
    await once(socket, "close");
    assert.match(raw, /^HTTP\/1\.1 400 /u);
    assert.match(raw, /x-request-id: \S+/iu);
    const body = JSON.parse(raw.slice(raw.indexOf("\r\n\r\n") + 4)) as { error: { code: string; message: string } };
    assert.equal(body.error.code, "invalid_request");
    assert.match(body.error.message, /Host header/u);
  } finally {
    await host.close();
  }
});
