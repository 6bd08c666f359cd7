import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { FastifyInstance } from "fastify";
import { echoGraph, failingGraph, noReplyGraph } from "../fixtures/graphs.js";
import { assertMatchesOpenAI } from "../helpers/openai-schema.js";
import { buildTestApp, parseSse } from "../helpers/server.js";

let app: FastifyInstance;

before(async () => {
  ({ app } = await buildTestApp(
    {
      echo: { graph: echoGraph, description: "Echo", streamableNodeNames: ["respond"] },
      failing: { graph: failingGraph(), description: "Always fails" },
      "no-reply": { graph: noReplyGraph(), description: "Never answers" },
    },
    { bodyLimit: 4096 },
  ));
});
after(() => app.close());

const user = (content = "hi") => ({ role: "user", content });

async function post(body: unknown, headers: Record<string, string> = {}) {
  return app.inject({
    method: "POST",
    url: "/v1/chat/completions",
    headers: { "content-type": "application/json", ...headers },
    payload: typeof body === "string" ? body : JSON.stringify(body),
  });
}

function expectError(
  response: { statusCode: number; json: () => any },
  status: number,
  code: string,
  param: string | null,
): { message: string; type: string } {
  const body = response.json();
  assertMatchesOpenAI("ErrorResponse", body);
  assert.equal(response.statusCode, status, JSON.stringify(body));
  assert.equal(body.error.code, code, JSON.stringify(body));
  assert.equal(body.error.param, param, JSON.stringify(body));
  assert.equal(body.error.type, status >= 500 ? "server_error" : "invalid_request_error");
  assert.ok(body.error.message.length > 0);
  return body.error;
}

describe("request validation (400, never 422 or 500)", () => {
  test("malformed JSON", async () => {
    const error = expectError(await post('{"model": "echo", '), 400, "invalid_value", null);
    assert.match(error.message, /not valid JSON/);
  });
  test("an empty body", async () => {
    expectError(await post(""), 400, "invalid_value", null);
  });
  test("a body that is not an object", async () => {
    expectError(await post([1, 2]), 400, "invalid_value", null);
  });
  test("a field of the wrong type names the field", async () => {
    expectError(await post({ model: "echo", messages: [user()], temperature: "hot" }), 400, "invalid_value", "temperature");
    expectError(await post({ model: 42, messages: [user()] }), 400, "invalid_value", "model");
    expectError(await post({ model: "echo", messages: "hi" }), 400, "invalid_value", "messages");
    expectError(await post({ model: "echo", messages: [user()], stream: "yes" }), 400, "invalid_value", "stream");
  });
  test("missing model and empty messages", async () => {
    expectError(await post({ messages: [user()] }), 400, "invalid_value", "model");
    expectError(await post({ model: "echo", messages: [] }), 400, "invalid_value", "messages");
  });
  test("an unknown top-level field", async () => {
    const error = expectError(await post({ model: "echo", messages: [user()], colour: "red" }), 400, "unknown_parameter", "colour");
    assert.match(error.message, /colour/);
  });
  test("n other than 1", async () => {
    expectError(await post({ model: "echo", messages: [user()], n: 2 }), 400, "invalid_value", "n");
  });
  test("standard OpenAI fields are accepted", async () => {
    const response = await post({
      model: "echo",
      messages: [user()],
      temperature: 0.2,
      top_p: 1,
      max_tokens: 10,
      max_completion_tokens: 10,
      stop: ["\n"],
      seed: 1,
      user: "someone",
      parallel_tool_calls: true,
      response_format: { type: "text" },
      n: 1,
      tool_choice: "auto",
      tools: [{ type: "function", function: { name: "f", parameters: { type: "object" } } }],
    });
    assert.equal(response.statusCode, 200, response.body);
  });
  test("metadata limits", async () => {
    const many = Object.fromEntries(Array.from({ length: 17 }, (_, index) => [`k${index}`, "v"]));
    expectError(await post({ model: "echo", messages: [user()], metadata: many }), 400, "invalid_value", "metadata");
    expectError(
      await post({ model: "echo", messages: [user()], metadata: { note: "x".repeat(513) } }),
      400,
      "invalid_value",
      "metadata.note",
    );
    expectError(await post({ model: "echo", messages: [user()], metadata: { n: 1 } }), 400, "invalid_value", "metadata.n");
  });
});

describe("messages", () => {
  test("a tool message without tool_call_id", async () => {
    const error = expectError(
      await post({ model: "echo", messages: [user(), { role: "tool", content: "42" }] }),
      400,
      "invalid_chat_message",
      "messages.1.tool_call_id",
    );
    assert.match(error.message, /tool_call_id/);
  });
  test("a user message without content", async () => {
    expectError(await post({ model: "echo", messages: [{ role: "user" }] }), 400, "invalid_chat_message", "messages.0.content");
  });
  test("an assistant message with neither content nor tool calls", async () => {
    expectError(
      await post({ model: "echo", messages: [user(), { role: "assistant" }, user()] }),
      400,
      "invalid_chat_message",
      "messages.1.content",
    );
  });
  test("a message without a role, or with an unknown one", async () => {
    expectError(await post({ model: "echo", messages: [{ content: "hi" }] }), 400, "invalid_chat_message", "messages.0.role");
    expectError(await post({ model: "echo", messages: [{ role: "robot", content: "hi" }] }), 400, "invalid_value", "messages.0.role");
  });
  test("a content part of the wrong shape names its path", async () => {
    expectError(
      await post({ model: "echo", messages: [{ role: "user", content: [{ type: "text", text: 5 }] }] }),
      400,
      "invalid_value",
      "messages.0.content.0.text",
    );
  });
});

describe("legacy function calling is refused", () => {
  test("functions", async () => {
    const error = expectError(
      await post({ model: "echo", messages: [user()], functions: [{ name: "f" }] }),
      400,
      "unsupported_parameter",
      "functions",
    );
    assert.match(error.message, /tools/);
  });
  test("function_call", async () => {
    expectError(await post({ model: "echo", messages: [user()], function_call: "auto" }), 400, "unsupported_parameter", "function_call");
  });
  test("the function role", async () => {
    expectError(
      await post({ model: "echo", messages: [user(), { role: "function", name: "f", content: "x" }] }),
      400,
      "unsupported_parameter",
      "messages.1.role",
    );
  });
  test("function_call on an assistant message", async () => {
    expectError(
      await post({
        model: "echo",
        messages: [user(), { role: "assistant", content: null, function_call: { name: "f", arguments: "{}" } }],
      }),
      400,
      "unsupported_parameter",
      "messages.1.function_call",
    );
  });
});

describe("other client errors", () => {
  test("an unknown model", async () => {
    const error = expectError(await post({ model: "gpt-9", messages: [user()] }), 404, "model_not_found", "model");
    assert.match(error.message, /gpt-9/);
  });
  test("an unknown route under the prefix", async () => {
    const response = await app.inject({ method: "GET", url: "/v1/completions" });
    expectError(response, 404, "unknown_url", null);
  });
  test("a body over the limit is 413", async () => {
    expectError(await post({ model: "echo", messages: [user("x".repeat(5000))] }), 413, "request_too_large", null);
  });
  test("a body that is not JSON is 415", async () => {
    const response = await app.inject({
      method: "POST",
      url: "/v1/chat/completions",
      headers: { "content-type": "text/plain" },
      payload: "hello",
    });
    expectError(response, 415, "unsupported_media_type", null);
  });
});

describe("server errors", () => {
  test("a graph failure is a generic 500 that leaks nothing", async () => {
    const response = await post({ model: "failing", messages: [user()] });
    const error = expectError(response, 500, "internal_error", null);
    assert.doesNotMatch(error.message, /hunter2/);
    assert.doesNotMatch(response.body, /hunter2|at .*\.ts/);
  });
  test("a graph without an assistant reply is a graph configuration error", async () => {
    const error = expectError(await post({ model: "no-reply", messages: [user()] }), 500, "graph_configuration_error", null);
    assert.match(error.message, /no-reply/);
  });
  test("a failure after the stream began is an error frame followed by [DONE]", async () => {
    const response = await post({ model: "failing", messages: [user()], stream: true });
    assert.equal(response.statusCode, 200);
    const frames = parseSse(response.body);
    assert.equal(frames.at(-1), "[DONE]");
    const errorFrame = frames.at(-2) as { error: { code: string } };
    assertMatchesOpenAI("ErrorResponse", errorFrame);
    assert.equal(errorFrame.error.code, "internal_error");
    assert.doesNotMatch(response.body, /hunter2/);
  });
});

describe("request ids", () => {
  test("a valid incoming x-request-id is echoed, on success and on errors", async () => {
    const ok = await post({ model: "echo", messages: [user()] }, { "x-request-id": "trace-abc-123" });
    assert.equal(ok.headers["x-request-id"], "trace-abc-123");
    const failed = await post({ model: "missing", messages: [user()] }, { "x-request-id": "trace-def" });
    assert.equal(failed.headers["x-request-id"], "trace-def");
    const notFound = await app.inject({ method: "GET", url: "/v1/nothing", headers: { "x-request-id": "trace-404" } });
    assert.equal(notFound.headers["x-request-id"], "trace-404");
  });
  test("a missing, too long or non-printable id is replaced by a new one", async () => {
    for (const headers of [{}, { "x-request-id": "x".repeat(129) }, { "x-request-id": "bad\u00e9id" }]) {
      const response = await app.inject({ method: "GET", url: "/v1/models", headers });
      const id = response.headers["x-request-id"];
      assert.equal(typeof id, "string");
      assert.match(String(id), /^[0-9a-f-]{36}$/);
    }
  });
});

describe("health", () => {
  test("/health and /ready under the prefix, and /health at the root of an app chat-serve created", async () => {
    assert.deepEqual((await app.inject({ method: "GET", url: "/v1/health" })).json(), { status: "ok" });
    assert.deepEqual((await app.inject({ method: "GET", url: "/health" })).json(), { status: "ok" });
    const ready = await app.inject({ method: "GET", url: "/v1/ready" });
    assert.equal(ready.statusCode, 200);
    assert.deepEqual(ready.json(), { status: "ready", checks: { graphs: "ok" } });
  });
});
