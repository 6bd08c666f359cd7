import assert from "node:assert/strict";
import { getEventListeners, once } from "node:events";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, describe, test } from "node:test";
import { serve as serveHono } from "@hono/node-server";
import express from "express";
import { Hono } from "hono";
import OpenAI from "openai";
import { WebSocket } from "ws";
import { ChatServe } from "../../src/app/chat-serve.js";
import { GraphRegistry } from "../../src/registry/graph-registry.js";
import { demoGraphs } from "../helpers/demo-graphs.js";
import { eventually } from "../helpers/eventually.js";
import { trackLiveResources } from "../helpers/live-handles.js";

// chat-serve in hosts that are not fastify: Express 5 (`app.use("/ai", serve.nodeHandler())`),
// `node:http`, Hono on `@hono/node-server` (`serve.fetch(c.req.raw, { mountPath })`), and the
// fetch handler called directly (what a Next.js route handler, Bun or Deno does). Through each:
// the openai client's chat and Responses streams, an interrupt and its resume, MCP's
// initialize, errors in each surface's envelope, a client that leaves freeing its run, and the
// host's own principal as the tenant.

type Principal = { tenant: string };

/** A ChatServe whose tenant is the host's principal (`request.raw.user`, as the host's middleware set it). */
function chatServe(keepAliveMs?: number): ChatServe {
  return new ChatServe({
    graphs: new GraphRegistry(demoGraphs()),
    ...(keepAliveMs === undefined ? {} : { keepAliveMs }),
    auth: { authenticate: (request) => (request.raw as IncomingMessage & { user?: Principal }).user?.tenant ?? null },
  });
}

const closers: (() => Promise<void>)[] = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

async function listening(server: Server): Promise<string> {
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The same checks through any host: `baseURL` is where the API (`/v1`) is, `fetcher` how to reach it. */
async function exercise(serve: ChatServe, baseURL: string, fetcher: typeof fetch = fetch): Promise<void> {
  const client = new OpenAI({ apiKey: "unused", baseURL, fetch: fetcher, maxRetries: 0 });
  // Chat completions, streamed.
  const chunks: string[] = [];
  for await (const chunk of await client.chat.completions.create({
    model: "echo",
    messages: [{ role: "user", content: "hello host" }],
    stream: true,
  })) {
    chunks.push(chunk.choices[0]?.delta.content ?? "");
  }
  assert.equal(chunks.join(""), "hello host");
  assert.ok(chunks.filter((chunk) => chunk !== "").length > 1, "the text came in pieces");
  // The Responses API, through the SDK's stream helper.
  const final = await client.responses.stream({ model: "think", input: "Can it?" }).finalResponse();
  assert.match(final.output_text, /my answer is: yes/u);
  // An interrupt and its resume.
  const asked = await client.chat.completions.create({ model: "approval", messages: [{ role: "user", content: "ship it" }] });
  const call = asked.choices[0]?.message.tool_calls?.[0];
  assert.ok(call?.type === "function" && call.function.name === "graph_interrupt");
  const resumed = await client.chat.completions.create({
    model: "approval",
    messages: [
      { role: "user", content: "ship it" },
      { role: "assistant", content: null, tool_calls: [call] },
      { role: "tool", tool_call_id: call.id, content: '{"resume": "approve"}' },
    ],
  });
  assert.equal(resumed.choices[0]?.message.content, "Approved: going ahead with ship it.");
  // MCP's initialize.
  const mcp = await fetcher(`${baseURL}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "host-test", version: "1" } },
    }),
  });
  assert.equal(mcp.status, 200);
  assert.match(await mcp.text(), /"serverInfo"/u);
  // Errors in each surface's own envelope.
  const openaiError = await fetcher(`${baseURL}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{}",
  });
  assert.equal(openaiError.status, 400);
  assert.equal(((await openaiError.json()) as { error: { type: string } }).error.type, "invalid_request_error");
  const anthropicError = await fetcher(`${baseURL}/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: '{"model":"echo"}',
  });
  assert.equal(anthropicError.status, 400);
  assert.equal(((await anthropicError.json()) as { type: string }).type, "error");
  // A client that leaves mid-stream frees its run.
  const controller = new AbortController();
  const leaving = await fetcher(`${baseURL}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "research", messages: [{ role: "user", content: "What is LangGraph?" }], stream: true }),
    signal: controller.signal,
  });
  const reader = leaving.body!.getReader();
  await reader.read();
  assert.equal(serve.activeRuns, 1);
  controller.abort();
  await reader.cancel().catch(() => {});
  await eventually(async () => assert.equal(serve.activeRuns, 0, "the run ended with its client"), 5_000, 20);
}

describe("chat-serve in any host", () => {
  test("node:http: the Node handler, and the upgrade handler for the Responses WebSocket mode", async () => {
    const serve = chatServe();
    await serve.bind({ prefix: "/v1", mcp: true, anthropic: true });
    closers.push(() => serve.close());
    const handler = serve.nodeHandler();
    const server = createServer((request, response) => {
      (request as IncomingMessage & { user?: Principal }).user = { tenant: "acme" };
      handler(request, response);
    });
    server.on("upgrade", (request: IncomingMessage & { user?: Principal }, socket, head) => {
      request.user = { tenant: "acme" };
      serve.upgradeHandler()(request, socket, head);
    });
    const origin = await listening(server);
    await exercise(serve, `${origin}/v1`);
    const socket = new WebSocket(`${origin.replace("http", "ws")}/v1/responses`);
    const types: string[] = [];
    socket.on("message", (data) => types.push((JSON.parse(String(data)) as { type: string }).type));
    await once(socket, "open");
    socket.send(JSON.stringify({ type: "response.create", model: "echo", input: "over a socket" }));
    while (!types.includes("response.completed")) await once(socket, "message");
    assert.equal(types[0], "response.created");
    socket.close();
  });

  test("Express 5: mounted under a path beside the host's own routes, its principal the tenant", async () => {
    const serve = chatServe();
    closers.push(() => serve.close());
    const app = express();
    app.get("/own", (_request, response) => {
      response.json({ host: "express" });
    });
    // The host's auth middleware: the caller it found is chat-serve's tenant; its request id is chat-serve's too.
    app.use((request, _response, next) => {
      (request as IncomingMessage & { user?: Principal }).user = { tenant: request.get("x-host-user") ?? "acme" };
      if (request.path === "/ai/v1/models") request.headers["x-request-id"] = "host-request-7";
      next();
    });
    app.use("/ai", serve.nodeHandler());
    const origin = await listening(createServer(app));
    await serve.bind({ prefix: "/v1", mcp: true, anthropic: true, a2a: true, docs: true, playground: true });
    await exercise(serve, `${origin}/ai/v1`);
    assert.deepEqual(await (await fetch(`${origin}/own`)).json(), { host: "express" });
    // The API docs and the playground: their links and the OpenAPI servers go through /ai too.
    const spec = (await (await fetch(`${origin}/ai/v1/openapi.json`)).json()) as { servers: { url: string }[] };
    assert.deepEqual(spec.servers, [{ url: "/ai/v1" }]);
    const swaggerSpec = (await (await fetch(`${origin}/ai/v1/docs/json`)).json()) as { servers: { url: string }[] };
    assert.deepEqual(swaggerSpec.servers, [{ url: "/ai/v1" }]);
    const docs = await fetch(`${origin}/ai/v1/docs`, { redirect: "manual" });
    assert.equal(docs.status, 302);
    assert.equal(docs.headers.get("location"), "/ai/v1/docs/");
    const docsPage = await (await fetch(`${origin}/ai/v1/docs/`)).text();
    assert.match(docsPage, /src="\.\/static\/swagger-ui-bundle\.js"/u);
    const playground = await (await fetch(`${origin}/ai/v1/playground`)).text();
    assert.ok(playground.includes('href="/ai/v1/docs"'), "the playground links the docs under the mount");
    assert.ok(!/["'(]\/v1\//u.test(playground), "no link skips the mount path");
    // The URLs chat-serve writes for itself keep Express's mount path (req.baseUrl).
    const card = (await (await fetch(`${origin}/ai/v1/a2a/echo/.well-known/agent-card.json`)).json()) as Record<string, unknown>;
    assert.ok(JSON.stringify(card).includes(`${origin}/ai/v1/a2a/echo`), JSON.stringify(card));
    const index = (await (await fetch(`${origin}/ai/v1/a2a`)).json()) as { agents: { url: string }[] };
    assert.ok(
      index.agents.every((agent) => agent.url.startsWith(`${origin}/ai/v1/a2a/`)),
      JSON.stringify(index),
    );
    assert.equal((await fetch(`${origin}/ai/v1/models`)).headers.get("x-request-id"), "host-request-7");
    // One principal's stored response is not another's.
    const acme = new OpenAI({ apiKey: "unused", baseURL: `${origin}/ai/v1`, defaultHeaders: { "x-host-user": "acme" } });
    const globex = new OpenAI({ apiKey: "unused", baseURL: `${origin}/ai/v1`, defaultHeaders: { "x-host-user": "globex" } });
    const stored = await acme.responses.create({ model: "echo", input: "mine" });
    assert.equal((await acme.responses.retrieve(stored.id)).id, stored.id);
    await assert.rejects(globex.responses.retrieve(stored.id), (error: InstanceType<typeof OpenAI.APIError>) => error.status === 404);
  });

  test("Express 5 with express.json() before the mount: the parsed body is served all the same", async () => {
    const serve = chatServe();
    closers.push(() => serve.close());
    const app = express();
    app.use(express.json());
    app.use((request, _response, next) => {
      (request as IncomingMessage & { user?: Principal }).user = { tenant: "acme" };
      next();
    });
    app.use("/ai", serve.nodeHandler());
    const origin = await listening(createServer(app));
    await serve.bind({ prefix: "/v1", mcp: true, anthropic: true });
    await exercise(serve, `${origin}/ai/v1`);
  });

  test("Hono on @hono/node-server: the fetch handler under a mount path", async () => {
    const serve = chatServe();
    closers.push(() => serve.close());
    await serve.bind({ prefix: "/v1", mcp: true, anthropic: true, a2a: true });
    const app = new Hono();
    app.get("/own", (context) => context.json({ host: "hono" }));
    app.all("/ai/*", (context) => serve.fetch(context.req.raw, { mountPath: "/ai", user: { tenant: "acme" } }));
    const server = serveHono({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }) as Server;
    await once(server, "listening");
    closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await exercise(serve, `${origin}/ai/v1`);
    const index = (await (await fetch(`${origin}/ai/v1/a2a`)).json()) as { agents: { url: string }[] };
    assert.ok(
      index.agents.every((agent) => agent.url.startsWith(`${origin}/ai/v1/a2a/`)),
      JSON.stringify(index),
    );
    assert.deepEqual(await (await fetch(`${origin}/own`)).json(), { host: "hono" });
  });

  test("the fetch handler called directly (a Next.js route handler, Bun, Deno)", async () => {
    const serve = chatServe();
    closers.push(() => serve.close());
    await serve.bind({ prefix: "/v1", mcp: true, anthropic: true });
    // What `export const POST = (request) => serve.fetch(request, { mountPath: "/api/chat" })` gets.
    const fetcher = ((input: string | URL | Request, init?: RequestInit) =>
      serve.fetch(new Request(input, init), { mountPath: "/api/chat", user: { tenant: "acme" } })) as typeof fetch;
    await exercise(serve, "http://app.example/api/chat/v1", fetcher);
    const unknown = await fetcher("http://app.example/api/chat/v1/nowhere");
    assert.equal(unknown.status, 404);
    assert.match(((await unknown.json()) as { error: { message: string } }).error.message, /nowhere/u);
    // A draining server refuses new runs, as it does on its own.
    serve.drain();
    const refused = await fetcher("http://app.example/api/chat/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "echo", messages: [{ role: "user", content: "late" }] }),
    });
    assert.equal(refused.status, 503);
    assert.ok(refused.headers.get("retry-after"));
  });

  test("keep-alive comments reach the host's client through the fetch handler", async () => {
    const serve = chatServe(50);
    closers.push(() => serve.close());
    await serve.bind({ prefix: "/v1" });
    const response = await serve.fetch(
      new Request("http://app.example/v1/chat/completions", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "research", messages: [{ role: "user", content: "What is LangGraph?" }], stream: true }),
      }),
      { user: { tenant: "acme" } },
    );
    const text = await response.text();
    assert.match(text, /^: keep-alive$/mu);
    assert.match(text, /data: \[DONE\]/u);
  });

  test("the fetch handler leaves nothing behind: no abort listener on a request, no timer of a stream", async () => {
    const timers = trackLiveResources(["Timeout"], { createdBy: /\/src\/(http|app|surfaces)\//u });
    const serve = chatServe();
    await serve.bind({ prefix: "/v1" });
    const post = (body: unknown, signal?: AbortSignal) =>
      new Request("http://app.example/v1/chat/completions", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
        ...(signal === undefined ? {} : { signal }),
      });
    const whole = post({ model: "echo", messages: [{ role: "user", content: "to the end" }], stream: true }, new AbortController().signal);
    const read = await serve.fetch(whole, { user: { tenant: "acme" } });
    assert.match(await read.text(), /data: \[DONE\]/u);
    assert.equal(getEventListeners(whole.signal, "abort").length, 0, "the finished stream stopped watching its request");
    const leaving = post(
      { model: "research", messages: [{ role: "user", content: "What is LangGraph?" }], stream: true },
      new AbortController().signal,
    );
    const cancelled = await serve.fetch(leaving, { user: { tenant: "acme" } });
    const reader = cancelled.body!.getReader();
    await reader.read();
    assert.ok(timers.count() > 0, "the stream's keep-alive timer is counted while it runs");
    await reader.cancel();
    await eventually(async () => assert.equal(serve.activeRuns, 0, "the cancelled body ended its run"), 5_000, 20);
    await eventually(async () => assert.equal(getEventListeners(leaving.signal, "abort").length, 0), 5_000, 20);
    await serve.close();
    await eventually(async () => assert.equal(timers.count(), 0, `${timers.count()} timers outlive the streams`), 5_000, 20);
    timers.stop();
  });
});
