import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { MemorySaver } from "@langchain/langgraph";
import type { FastifyInstance } from "fastify";
import OpenAI from "openai";
import { ChatServe } from "../../src/app/chat-serve.js";
import { InMemoryRunCoordinator } from "../../src/coordination/in-memory-run-coordinator.js";
import { GraphRegistry } from "../../src/registry/graph-registry.js";
import { echoGraph, researchEntry } from "../fixtures/graphs.js";
import { type Counter, counterGraph } from "../fixtures/interrupt-graphs.js";
import { assertMatchesOpenAI } from "../helpers/openai-schema.js";
import { answerBatch } from "../helpers/resume.js";

type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type ToolCall = OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;

const ACME_KEY = "sk-acme-0123456789abcdef";
const BETA_KEY = "sk-beta-0123456789abcdef";
const GAMMA_KEY = "sk-gamma-0123456789abcdef";

/** How often graph code ran: a refused request must leave it at zero. */
let invocations = 0;
const counter: Counter = { before: 0, after: 0 };
const tenantsSeen: (string | undefined)[] = [];

let app: FastifyInstance;
let baseURL: string;

before(async () => {
  const research = researchEntry();
  const registry = new GraphRegistry(
    {
      echo: {
        graph: echoGraph(),
        description: "Echo",
        requestToInput: (_request, messages) => {
          invocations += 1;
          return { messages };
        },
      },
      research: {
        ...research,
        contextFactory: (_request, settings, caller) => {
          tenantsSeen.push(caller.tenant);
          return settings;
        },
      },
      counter: { graph: counterGraph(counter), description: "Counter", features: ["INTERRUPTS"] },
    },
    { runCoordinator: new InMemoryRunCoordinator(), checkpointer: new MemorySaver() },
  );
  const serve = new ChatServe({
    graphs: registry,
    auth: {
      keys: [
        { tenant: "acme", key: ACME_KEY },
        { tenant: "beta", sha256: createHash("sha256").update(BETA_KEY).digest("hex"), models: ["echo", "counter"] },
        { tenant: "gamma", key: GAMMA_KEY, models: ["research"] },
      ],
      // A gateway in front sets this header after its own login.
      authenticate: (request) => (request.headers["x-gateway-user"] === "carol" ? "gateway-carol" : null),
    },
  });
  app = await serve.bind({ prefix: "/v1", playground: true, docs: true });
  baseURL = `${await app.listen({ host: "127.0.0.1", port: 0 })}/v1`;
});
after(() => app.close());

const client = (apiKey: string) => new OpenAI({ baseURL, apiKey, maxRetries: 0 });
const hello = (model = "echo") => ({ model, messages: [{ role: "user" as const, content: "hello" }] });

describe("API keys", () => {
  test("no key, or a wrong one, is a 401 invalid_api_key before any graph code runs", async () => {
    const before = invocations;
    for (const headers of [{}, { authorization: "Bearer sk-wrong-0123456789abcdef" }, { authorization: ACME_KEY }, { "api-key": "nope" }]) {
      const response = await app.inject({ method: "POST", url: "/v1/chat/completions", headers, payload: hello() });
      assert.equal(response.statusCode, 401, JSON.stringify(headers));
      const body = response.json();
      assertMatchesOpenAI("ErrorResponse", body);
      assert.equal(body.error.code, "invalid_api_key");
      assert.equal(body.error.type, "invalid_request_error");
      assert.match(response.headers["www-authenticate"] as string, /^Bearer/u);
      assert.ok(response.headers["x-request-id"]);
    }
    // A body that would fail validation is not even read.
    const bad = await app.inject({
      method: "POST",
      url: "/v1/chat/completions",
      payload: "{not json",
      headers: { "content-type": "application/json" },
    });
    assert.equal(bad.statusCode, 401);
    assert.equal(invocations, before, "no graph code ran");
  });

  test("the openai SDK surfaces a 401 as its AuthenticationError", async () => {
    await assert.rejects(client("sk-wrong-0123456789abcdef").chat.completions.create(hello()), OpenAI.AuthenticationError);
  });

  test("a key is taken as a bearer token, in an api-key header, or stored as its SHA-256", async () => {
    assert.equal((await client(ACME_KEY).chat.completions.create(hello())).choices[0]?.message.content, "hello");
    const azure = await app.inject({ method: "POST", url: "/v1/chat/completions", headers: { "api-key": ACME_KEY }, payload: hello() });
    assert.equal(azure.statusCode, 200);
    assert.equal((await client(BETA_KEY).chat.completions.create(hello())).choices[0]?.message.content, "hello");
  });

  test("the probes and the pages need no key; /models and the Responses API do", async () => {
    for (const url of [
      "/v1/health",
      "/health",
      "/v1/ready",
      "/ready",
      "/v1/playground",
      "/v1/playground/assets/playground.js",
      "/v1/docs",
      "/v1/openapi.json",
    ]) {
      assert.equal((await app.inject({ method: "GET", url })).statusCode, 200, url);
    }
    // Swagger UI's Authorize button sends the key.
    const spec = (await app.inject({ method: "GET", url: "/v1/openapi.json" })).json();
    assert.deepEqual(spec.components.securitySchemes.apiKey, { type: "http", scheme: "bearer" });
    for (const [method, url] of [
      ["GET", "/v1/models"],
      ["GET", "/v1/models/echo"],
      ["POST", "/v1/responses"],
      ["GET", "/v1/no-such-path"],
    ] as const) {
      assert.equal((await app.inject({ method, url })).statusCode, 401, url);
    }
  });

  test("a key limited to some models sees only those: the others are 404 as if they did not exist", async () => {
    const beta = client(BETA_KEY);
    assert.deepEqual((await beta.models.list()).data.map((model) => model.id).sort(), ["counter", "echo"]);
    await assert.rejects(beta.models.retrieve("research"), OpenAI.NotFoundError);
    const refused = await app.inject({
      method: "POST",
      url: "/v1/chat/completions",
      headers: { authorization: `Bearer ${BETA_KEY}` },
      payload: hello("research"),
    });
    assert.equal(refused.statusCode, 404);
    assert.equal(refused.json().error.code, "model_not_found");
    assert.equal(
      refused.json().error.message,
      "The model 'research' does not exist. The models here: echo, counter. GET /models lists them.",
    );
    const viaResponses = await app.inject({
      method: "POST",
      url: "/v1/responses",
      headers: { authorization: `Bearer ${BETA_KEY}` },
      payload: { model: "research", input: "hi" },
    });
    assert.equal(viaResponses.statusCode, 404);
    // A key with no list sees every model.
    assert.equal((await client(ACME_KEY).models.list()).data.length, 3);
  });

  test("the tenant reaches the context factory", async () => {
    tenantsSeen.length = 0;
    await client(GAMMA_KEY).chat.completions.create(hello("research"));
    assert.deepEqual(tenantsSeen, ["gamma"]);
  });

  test("authenticate gives a tenant to requests no key matched, and refuses the rest", async () => {
    const gateway = await app.inject({ method: "GET", url: "/v1/models", headers: { "x-gateway-user": "carol" } });
    assert.equal(gateway.statusCode, 200);
    assert.equal((await app.inject({ method: "GET", url: "/v1/models", headers: { "x-gateway-user": "mallory" } })).statusCode, 401);
  });
});

describe("tenants", () => {
  test("the tenant is the checkpoint scope: another tenant can neither resume nor replay the run", async () => {
    const history: Message[] = [{ role: "user", content: "tenant work" }];
    const acme = client(ACME_KEY);
    const paused = await acme.chat.completions.create({ model: "counter", messages: history });
    const calls = (paused.choices[0]?.message.tool_calls ?? []) as ToolCall[];
    assert.equal(calls[0]?.function.name, "graph_interrupt");
    const resume = answerBatch(history, calls, JSON.stringify({ resume: "yes" }));
    await assert.rejects(
      client(BETA_KEY).chat.completions.create({ model: "counter", messages: resume }),
      (error: InstanceType<typeof OpenAI.APIError>) => {
        assert.equal(error.status, 409);
        assert.equal(error.code, "interrupt_state_conflict");
        return true;
      },
    );
    // The same run id under another tenant is that tenant's own new run, not a look into acme's.
    const runId = JSON.parse(calls[0]!.function.arguments).run_id as string;
    const replay = await client(BETA_KEY).chat.completions.create({
      model: "counter",
      messages: history,
      metadata: { graph_run_id: runId },
    });
    assert.equal(replay.choices[0]?.finish_reason, "tool_calls");
    assert.notEqual(
      JSON.parse((replay.choices[0]!.message.tool_calls![0] as ToolCall).function.arguments).state_token,
      JSON.parse(calls[0]!.function.arguments).state_token,
    );
    const afterBefore = counter.after;
    const done = await acme.chat.completions.create({ model: "counter", messages: resume });
    assert.equal(done.choices[0]?.finish_reason, "stop");
    assert.equal(counter.after, afterBefore + 1, "the owner resumed it, once");
  });
});

test("keys are checked when the server is built: a key must name a tenant and exactly one of key or sha256, and known models", () => {
  const graphs = () => new GraphRegistry({ echo: { graph: echoGraph(), description: "Echo" } });
  assert.throws(
    () => new ChatServe({ graphs: graphs(), auth: { keys: [{ tenant: "a", key: undefined }] } }),
    /auth\.keys\.0: needs exactly one of key or sha256/u,
  );
  assert.throws(
    () => new ChatServe({ graphs: graphs(), auth: { keys: [{ tenant: "a", key: "short" }] } }),
    /auth\.keys\.0\.key: must be at least 16 characters/u,
  );
  assert.throws(
    () => new ChatServe({ graphs: graphs(), auth: { keys: [{ tenant: "a", key: ACME_KEY, models: ["ehco"] }] } }),
    /names the model 'ehco', which is not registered; did you mean 'echo'\?/u,
  );
  assert.throws(
    () => new ChatServe({ graphs: graphs(), auth: {} }),
    /auth needs keys, a keysFile, an authenticate function or a LangGraph Auth/u,
  );
});
