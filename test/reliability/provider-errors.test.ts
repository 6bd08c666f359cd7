import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ChatOpenAI } from "@langchain/openai";
import { InternalError, RunBusyError } from "../../src/errors/catalogue.js";
import { isServeError } from "../../src/errors/serve-error.js";
import { assertMatchesOpenAI } from "../helpers/openai-schema.js";
import { parseSse, startTestServer, type TestServer } from "../helpers/server.js";

// What the loopback provider answers next: an OpenAI-style error with the provider's own words.
let providerAnswer: { status: number; headers?: Record<string, string>; code: string } = { status: 500, code: "x" };
const PROVIDER_MESSAGE = "Incorrect API key provided: sk-test-********1234. See https://provider.example/troubleshooting";

let provider: Server;
let server: TestServer;
const logLines: string[] = [];

function chatModelGraph(baseURL: string) {
  const model = new ChatOpenAI({ model: "gpt-test", apiKey: "sk-test-secret-1234", maxRetries: 0, configuration: { baseURL } });
  return new StateGraph(MessagesAnnotation)
    .addNode("respond", async (state, config) => ({ messages: [await model.invoke(state.messages, config)] }))
    .addEdge(START, "respond")
    .addEdge("respond", END)
    .compile();
}

/** Graph code that throws something shaped like chat-serve's own errors, without being one. */
function lookalikeGraph() {
  return new StateGraph(MessagesAnnotation)
    .addNode("respond", () => {
      throw Object.assign(new Error("lookalike"), { status: 404, code: "model_not_found", type: "invalid_request_error" });
    })
    .addEdge(START, "respond")
    .addEdge("respond", END)
    .compile();
}

before(async () => {
  provider = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      const { status, headers = {}, code } = providerAnswer;
      response.writeHead(status, { "content-type": "application/json", ...headers });
      response.end(JSON.stringify({ error: { message: PROVIDER_MESSAGE, type: "invalid_request_error", param: null, code } }));
    });
  });
  await new Promise<void>((resolve) => provider.listen(0, "127.0.0.1", resolve));
  const baseURL = `http://127.0.0.1:${(provider.address() as AddressInfo).port}/v1`;
  server = await startTestServer(
    {
      provider: { graph: chatModelGraph(baseURL), description: "Calls a provider", streamableNodeNames: ["respond"] },
      lookalike: { graph: lookalikeGraph(), description: "Throws an error that looks like ours" },
    },
    { logger: { level: "info", stream: { write: (line: string) => void logLines.push(line) } } },
  );
});
after(async () => {
  await server.close();
  await new Promise((resolve) => provider.close(resolve));
});

async function ask(model: string, stream = false) {
  const response = await fetch(`${server.baseURL}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model, stream, messages: [{ role: "user", content: "hi" }] }),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

function assertNoProviderTrace(text: string) {
  for (const needle of ["sk-test", "Incorrect API key", "troubleshooting", "invalid_api_key", "provider.example"]) {
    assert.ok(!text.includes(needle), `the client must not see '${needle}': ${text}`);
  }
}

describe("errors from a model provider inside a graph", () => {
  const cases = [
    { status: 401, code: "invalid_api_key", expected: 502, expectedCode: "upstream_error" },
    { status: 404, code: "model_not_found", expected: 502, expectedCode: "upstream_error" },
    { status: 400, code: "context_length_exceeded", expected: 502, expectedCode: "upstream_error" },
    { status: 429, code: "rate_limit_exceeded", expected: 503, expectedCode: "upstream_unavailable", retryAfter: "7" },
    { status: 500, code: "server_error", expected: 503, expectedCode: "upstream_unavailable" },
  ];
  for (const { status, code, expected, expectedCode, retryAfter } of cases) {
    test(`a provider ${status} ${code} is ${expected} ${expectedCode}, with none of the provider's words`, async () => {
      providerAnswer = { status, code, headers: retryAfter === undefined ? {} : { "retry-after": retryAfter } };
      const response = await ask("provider");
      assert.equal(response.status, expected, response.text);
      const body = JSON.parse(response.text);
      assertMatchesOpenAI("ErrorResponse", body);
      assert.equal(body.error.code, expectedCode);
      assert.equal(body.error.type, "server_error");
      assertNoProviderTrace(response.text);
      assert.equal(response.headers.get("retry-after"), retryAfter ?? null);
    });
  }

  test("the provider's message and status stay in the server log, with the request id", async () => {
    providerAnswer = { status: 401, code: "invalid_api_key" };
    const response = await ask("provider");
    const requestId = response.headers.get("x-request-id")!;
    const line = logLines.find((entry) => entry.includes(requestId) && entry.includes("Incorrect API key"));
    assert.ok(line, "a log line names the request and the provider's message");
    assert.match(line, /"status":401/u);
  });

  test("a provider error after the stream began is an error frame with the same code", async () => {
    providerAnswer = { status: 401, code: "invalid_api_key" };
    const response = await ask("provider", true);
    assert.equal(response.status, 200);
    const frames = parseSse(response.text);
    const errorFrame = frames.find((frame) => typeof frame === "object" && frame !== null && "error" in frame) as {
      error: { code: string };
    };
    assert.equal(errorFrame.error.code, "upstream_error");
    assert.equal(frames.at(-1), "[DONE]");
    assertNoProviderTrace(response.text);
  });

  test("an error that only looks like chat-serve's 404 is upstream_error, never model_not_found", async () => {
    const response = await ask("lookalike");
    assert.equal(response.status, 502, response.text);
    const body = JSON.parse(response.text);
    assert.equal(body.error.code, "upstream_error");
    assert.ok(!response.text.includes("lookalike"));
  });

  test("only chat-serve's own errors pass the brand check", () => {
    const lookalike = Object.assign(new Error("x"), { status: 409, code: "run_busy", type: "invalid_request_error" });
    assert.equal(isServeError(lookalike), false);
    assert.equal(isServeError(new RunBusyError()), true);
    assert.equal(isServeError(new InternalError()), true);
    // Another copy of the package brands its errors with the same registry symbol.
    const fromOtherCopy = Object.defineProperty(new Error("y"), Symbol.for("chat-serve.error"), {
      value: ["RunBusyError", "ClientError", "ServeError"],
    });
    assert.equal(isServeError(fromOtherCopy), true);
  });
});
