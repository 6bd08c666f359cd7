import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import type { ClientOptions } from "@langchain/openai";
import { Agent, fetch as undiciFetch } from "undici";
import { InternalError, RunBusyError } from "../../src/errors/catalogue.js";
import { isServeError } from "../../src/errors/serve-error.js";
import { chatOpenAIGraph, startLoopbackProvider } from "../helpers/loopback-provider.js";
import { assertMatchesOpenAI, assertMatchesResponses } from "../helpers/openai-schema.js";
import { parseSse, startTestServer, type TestServer } from "../helpers/server.js";

// What the loopback provider answers next: an OpenAI-style error with the provider's own words.
let providerAnswer: { status: number; headers?: Record<string, string>; code: string } = { status: 500, code: "x" };
const PROVIDER_MESSAGE = "Incorrect API key provided: sk-test-********1234. See https://provider.example/troubleshooting";

let provider: Awaited<ReturnType<typeof startLoopbackProvider>>;
/** Accepts connections and never answers: a provider that hangs. */
let silent: Server;
let server: TestServer;
const logLines: string[] = [];

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
  provider = await startLoopbackProvider(() => {
    const { status, headers, code } = providerAnswer;
    return {
      status,
      headers,
      body: JSON.stringify({ error: { message: PROVIDER_MESSAGE, type: "invalid_request_error", param: null, code } }),
    };
  });
  silent = createServer(() => {});
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  // A port nothing listens on: taken, then given back.
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
  const closedPort = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  // A name that does not resolve, without asking a DNS server: the resolver itself says ENOTFOUND.
  const noSuchHost = new Agent({
    connect: {
      lookup: (hostname, _options, callback) =>
        callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND", hostname }), "", 4),
    },
  });
  const unresolvedFetch = ((url: string, init?: object) =>
    undiciFetch(url, { ...init, dispatcher: noSuchHost })) as unknown as ClientOptions["fetch"];
  server = await startTestServer(
    {
      refused: {
        graph: chatOpenAIGraph(`http://127.0.0.1:${closedPort}/v1`),
        description: "Provider port closed",
        streamableNodeNames: ["respond"],
      },
      unresolved: {
        graph: chatOpenAIGraph("http://provider.invalid/v1", { fetch: unresolvedFetch }),
        description: "DNS fails",
        streamableNodeNames: ["respond"],
      },
      hanging: {
        graph: chatOpenAIGraph(`http://127.0.0.1:${(silent.address() as AddressInfo).port}/v1`, { timeout: 300 }),
        description: "Provider never answers",
        streamableNodeNames: ["respond"],
      },
      provider: { graph: chatOpenAIGraph(provider.baseURL), description: "Calls a provider", streamableNodeNames: ["respond"] },
      lookalike: { graph: lookalikeGraph(), description: "Throws an error that looks like ours" },
    },
    { logger: { level: "info", stream: { write: (line: string) => void logLines.push(line) } } },
  );
});
after(async () => {
  await server.close();
  await provider.close();
  silent.closeAllConnections();
  await new Promise((resolve) => silent.close(resolve));
});

async function ask(model: string, stream = false, api: "chat" | "responses" = "chat") {
  const body = api === "chat" ? { model, stream, messages: [{ role: "user", content: "hi" }] } : { model, stream, input: "hi" };
  const response = await fetch(`${server.baseURL}/${api === "chat" ? "chat/completions" : "responses"}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/**
 * The error code a failed run answered with, on either API, complete or streamed: the error
 * body of a complete answer, the error frame of a chat stream, the error event (then
 * response.failed) of a Responses stream. Every body and event is checked against the schemas.
 */
async function failureOf(model: string, stream: boolean, api: "chat" | "responses") {
  const response = await ask(model, stream, api);
  assertNoProviderTrace(response.text);
  if (!stream) {
    const body = JSON.parse(response.text);
    if (api === "chat") assertMatchesOpenAI("ErrorResponse", body);
    else assertMatchesResponses("ErrorResponse", body);
    return { status: response.status, code: body.error.code as string, retryAfter: response.headers.get("retry-after") };
  }
  assert.equal(response.status, 200, "a stream has begun before the provider is called");
  if (api === "chat") {
    const frames = parseSse(response.text);
    assert.equal(frames.at(-1), "[DONE]");
    const error = frames.find((frame) => typeof frame === "object" && frame !== null && "error" in frame) as { error: { code: string } };
    return { status: 200, code: error.error.code, retryAfter: null };
  }
  const events = response.text
    .split("\n\n")
    .flatMap((frame) => /^data: (.+)$/mu.exec(frame)?.[1] ?? [])
    .map((data) => JSON.parse(data) as { type: string; code?: string; response?: { status: string } });
  for (const event of events) assertMatchesResponses("ResponseStreamEvent", event);
  const [error, failed] = events.slice(-2);
  assert.equal(failed?.type, "response.failed");
  assert.equal(failed?.response?.status, "failed");
  return { status: 200, code: error?.code ?? "", retryAfter: null };
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

  for (const { status, code, expected, expectedCode } of cases) {
    test(`a provider ${status} on both APIs, complete and streamed, is ${expectedCode}`, async () => {
      providerAnswer = { status, code };
      for (const api of ["chat", "responses"] as const) {
        for (const stream of [false, true]) {
          const failure = await failureOf("provider", stream, api);
          assert.deepEqual([failure.status, failure.code], [stream ? 200 : expected, expectedCode], `${api}, stream ${stream}`);
        }
      }
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

  for (const [model, what] of [
    ["refused", "a provider whose port refuses the connection"],
    ["unresolved", "a provider whose name does not resolve"],
    ["hanging", "a provider that never answers (the model's timeout)"],
  ] as const) {
    test(`${what} is 503 upstream_unavailable on both APIs, complete and streamed`, async () => {
      for (const api of ["chat", "responses"] as const) {
        for (const stream of [false, true]) {
          const failure = await failureOf(model, stream, api);
          assert.deepEqual([failure.status, failure.code], [stream ? 200 : 503, "upstream_unavailable"], `${api}, stream ${stream}`);
        }
      }
    });
  }

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
