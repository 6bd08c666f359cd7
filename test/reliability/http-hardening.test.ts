import assert from "node:assert/strict";
import { once } from "node:events";
import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { after, before, describe, test } from "node:test";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ScriptedChatModel } from "../../src/testing/scripted-chat-model.js";
import { echoGraph } from "../fixtures/graphs.js";
import { trackLiveResources } from "../helpers/live-handles.js";
import { assertMatchesOpenAI } from "../helpers/openai-schema.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

const LONG_MODEL_ID = `m-${"x".repeat(150)}`;

/** Streams its reply a word every 100 ms: a response that outlasts the request timeouts. */
function slowGraph() {
  const model = new ScriptedChatModel({
    respond: () =>
      "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty twenty-one twenty-two twenty-three twenty-four twenty-five",
    chunkDelayMs: 100,
  });
  return new StateGraph(MessagesAnnotation)
    .addNode("respond", async (state, config) => ({ messages: [await model.invoke(state.messages, config)] }))
    .addEdge(START, "respond")
    .addEdge("respond", END)
    .compile();
}

let server: TestServer;
before(async () => {
  server = await startTestServer(
    {
      echo: { graph: echoGraph(), description: "Echo", streamableNodeNames: ["respond"] },
      [LONG_MODEL_ID]: { graph: echoGraph(), description: "A model with a long id" },
      slow: { graph: slowGraph(), description: "Streams slowly", streamableNodeNames: ["respond"] },
    },
    { httpTimeouts: { requestTimeoutMs: 1_000, headersTimeoutMs: 1_000 } },
  );
});
after(() => server.close());

/** Sends raw bytes and reads everything the server answers until it closes the connection. */
async function rawExchange(bytes: string | Buffer, options: { endAfterWrite?: boolean } = {}): Promise<string> {
  const { port } = new URL(server.origin);
  const socket = connect(Number(port), "127.0.0.1");
  await once(socket, "connect");
  let received = "";
  socket.on("data", (data: Buffer) => (received += data.toString("latin1")));
  socket.write(bytes);
  if (options.endAfterWrite) socket.end();
  await once(socket, "close");
  return received;
}

/** Splits a raw HTTP/1.1 response into its status, headers and JSON body. */
function parseRawResponse(raw: string): { status: number; headers: Record<string, string>; body: unknown } {
  const [head = "", ...rest] = raw.split("\r\n\r\n");
  const [statusLine = "", ...headerLines] = head.split("\r\n");
  const headers = Object.fromEntries(
    headerLines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]),
  );
  return { status: Number(statusLine.split(" ")[1]), headers, body: JSON.parse(rest.join("\r\n\r\n")) };
}

function assertEnvelope(response: { status: number; headers: Record<string, string>; body: unknown }, status: number, code: string) {
  assert.equal(response.status, status, JSON.stringify(response.body));
  assertMatchesOpenAI("ErrorResponse", response.body);
  assert.equal((response.body as { error: { code: string } }).error.code, code);
  assert.match(response.headers["x-request-id"] ?? "", /^[\x20-\x7e]{1,128}$/u, "every error carries x-request-id");
}

async function fetchResponse(path: string, init: RequestInit = {}) {
  const response = await fetch(`${server.origin}${path}`, init);
  return { status: response.status, headers: Object.fromEntries(response.headers), body: await response.json() };
}

describe("every answer of the app is the OpenAI envelope", () => {
  test("bad percent-encoding in the URL is 400 invalid_request", async () => {
    assertEnvelope(await fetchResponse("/v1/models/%ZZ"), 400, "invalid_request");
  });

  test("a model id over 100 characters can be retrieved, as listed", async () => {
    const list = await fetchResponse("/v1/models");
    assert.ok((list.body as { data: { id: string }[] }).data.some((model) => model.id === LONG_MODEL_ID));
    const retrieved = await fetchResponse(`/v1/models/${encodeURIComponent(LONG_MODEL_ID)}`);
    assert.equal(retrieved.status, 200);
    assert.equal((retrieved.body as { id: string }).id, LONG_MODEL_ID);
    assertEnvelope(await fetchResponse(`/v1/models/${"y".repeat(300)}`), 404, "model_not_found");
  });

  test("a wrong method on a known path is 405 with Allow", async () => {
    const get = await fetchResponse("/v1/chat/completions");
    assertEnvelope(get, 405, "method_not_allowed");
    assert.equal(get.headers.allow, "POST");
    const del = await fetchResponse("/v1/models/echo", { method: "DELETE" });
    assertEnvelope(del, 405, "method_not_allowed");
    assert.equal(del.headers.allow, "GET, HEAD");
    const post = await fetchResponse("/v1/models", { method: "POST", body: "{}", headers: { "content-type": "application/json" } });
    assertEnvelope(post, 405, "method_not_allowed");
    assertEnvelope(await fetchResponse("/v1/nowhere", { method: "DELETE" }), 404, "unknown_url");
  });

  test("headers over the size limit are 431", async () => {
    const raw = await rawExchange(`GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`);
    assertEnvelope(parseRawResponse(raw), 431, "headers_too_large");
  });

  test("framing that is not HTTP is 400", async () => {
    const raw = await rawExchange("HELLO WORLD\r\n\r\n");
    assertEnvelope(parseRawResponse(raw), 400, "invalid_request");
    const badLength = await rawExchange("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n");
    assertEnvelope(parseRawResponse(badLength), 400, "invalid_request");
  });

  test("an HTTP/1.1 request without a Host header is 400 in the envelope, with a request id", async () => {
    const raw = await rawExchange("GET /v1/models HTTP/1.1\r\nConnection: close\r\n\r\n");
    const response = parseRawResponse(raw);
    assertEnvelope(response, 400, "invalid_request");
    assert.match(JSON.stringify(response.body), /Host header/u);
    const withHost = parseRawResponse(await rawExchange("GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
    assert.equal(withHost.status, 200);
    const http10 = parseRawResponse(await rawExchange("GET /v1/models HTTP/1.0\r\n\r\n"));
    assert.equal(http10.status, 200, "HTTP/1.0 has no Host header to require");
  });

  test("a body that stops arriving is cut with 408 after the request timeout", async () => {
    const started = performance.now();
    const raw = await rawExchange(
      'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"model":',
    );
    assertEnvelope(parseRawResponse(raw), 408, "request_timeout");
    assert.ok(performance.now() - started < 5_000, "cut by the timeout, not left open");
  });
});

describe("streams", () => {
  const streamBody = JSON.stringify({ model: "echo", stream: true, messages: [{ role: "user", content: "one two three" }] });

  test("Connection: close is honoured: the header says close and the socket ends after [DONE]", async () => {
    const raw = await rawExchange(
      `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(streamBody)}\r\n\r\n${streamBody}`,
    );
    const head = raw.slice(0, raw.indexOf("\r\n\r\n")).toLowerCase();
    assert.match(head, /^connection: close$/mu);
    assert.doesNotMatch(head, /keep-alive/u);
    assert.match(raw, /data: \[DONE\]/u);
  });

  test("a stream that outlasts the request and header timeouts is never cut", async () => {
    const started = performance.now();
    const response = await fetch(`${server.baseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "slow", stream: true, messages: [{ role: "user", content: "go" }] }),
    });
    const text = await response.text();
    assert.ok(performance.now() - started > 2_000, "the stream lasted longer than both timeouts (1 s)");
    assert.match(text, /twenty-five/u);
    assert.match(text, /data: \[DONE\]/u);
  });

  test("keep-alive streams say keep-alive", async () => {
    const response = await new Promise<{ headers: Record<string, unknown> }>((resolve, reject) => {
      const request = httpRequest(
        `${server.baseURL}/chat/completions`,
        { method: "POST", headers: { "content-type": "application/json" }, agent: false },
        (incoming) => {
          incoming.resume();
          incoming.on("end", () => resolve({ headers: incoming.headers }));
        },
      );
      request.on("error", reject);
      request.setHeader("connection", "keep-alive");
      request.end(streamBody);
    });
    assert.equal(response.headers.connection, "keep-alive");
  });

  test("finished streams leave no timer behind", async (t) => {
    const tracker = trackLiveResources(["Timeout"]);
    t.after(() => tracker.stop());
    const timers = () => tracker.count();
    const stream = async () => {
      const response = await fetch(`${server.baseURL}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", connection: "close" },
        body: streamBody,
      });
      assert.match(await response.text(), /data: \[DONE\]/u);
    };
    for (let index = 0; index < 5; index += 1) await stream();
    const baseline = timers();
    for (let index = 0; index < 100; index += 1) await stream();
    // Timers that fetch or the server arm for a moment may still be counted; a leak of one per
    // stream would be a hundred.
    assert.ok(timers() <= baseline + 2, `timers before ${baseline}, after ${timers()}`);
  });
});

describe("message roles", () => {
  for (const role of ["constructor", "toString", "__proto__", "hasOwnProperty", "valueOf"]) {
    test(`role ${JSON.stringify(role)} is 400 invalid_value`, async () => {
      const body = `{"model":"echo","messages":[{"role":${JSON.stringify(role)},"content":"hi"}]}`;
      const response = await fetchResponse("/v1/chat/completions", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      assert.ok(response.status === 400, `${response.status} ${JSON.stringify(response.body)}`);
      assertMatchesOpenAI("ErrorResponse", response.body);
    });
  }
});
