import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import OpenAI from "openai";
import { ScriptedChatModel } from "../../src/testing/scripted-chat-model.js";
import { eventually } from "../helpers/eventually.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

const slow = new ScriptedChatModel({ respond: () => "one two three four five six seven eight nine ten", chunkDelayMs: 50 });
const talkative = new ScriptedChatModel({ respond: () => "a few words first" });

/** Streams its answer word by word, slowly enough for a client to leave halfway. */
const slowGraph = new StateGraph(MessagesAnnotation)
  .addNode("respond", async (state, config) => ({ messages: [await slow.invoke(state.messages, config)] }))
  .addEdge(START, "respond")
  .addEdge("respond", END)
  .compile();
/** Streams a few words, then fails: the stream ends in an error frame under a 200. */
const failingGraph = new StateGraph(MessagesAnnotation)
  .addNode("respond", async (state, config) => {
    await talkative.invoke(state.messages, config);
    throw new Error("the provider went away");
  })
  .addEdge(START, "respond")
  .addEdge("respond", END)
  .compile();

interface LogLine {
  msg: string;
  status?: number;
  outcome?: string;
  errorCode?: string;
  requestId?: string;
}
const lines: LogLine[] = [];
let server: TestServer;
let client: OpenAI;
before(async () => {
  server = await startTestServer(
    {
      slow: { graph: slowGraph, description: "Slow", streamableNodeNames: ["respond"] },
      failing: { graph: failingGraph, description: "Fails", streamableNodeNames: ["respond"] },
    },
    { logger: { level: "info", stream: { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) } } },
  );
  client = new OpenAI({ baseURL: server.baseURL, apiKey: "x", maxRetries: 0 });
});
after(() => server.close());

/** The request line of one request, once the connection has closed. */
async function requestLine(requestId: string): Promise<LogLine> {
  let found: LogLine | undefined;
  await eventually(async () => {
    found = lines.find((line) => line.requestId === requestId && line.outcome !== undefined);
    assert.ok(found, `a request line for ${requestId}`);
  }, 5_000);
  return found!;
}

const ask = [{ role: "user" as const, content: "hi" }];

describe("the request log line", () => {
  test("a stream that ends well: completed", async () => {
    const stream = await client.chat.completions.create(
      { model: "slow", messages: ask, stream: true },
      { headers: { "x-request-id": "log-completed" } },
    );
    for await (const _chunk of stream) {
      // Read to the end.
    }
    const line = await requestLine("log-completed");
    assert.equal(line.status, 200);
    assert.equal(line.outcome, "completed");
    assert.match(line.msg, /^POST \/v1\/chat\/completions 200 slow \d+ms completed$/u);
  });

  test("a stream the client left: aborted, though the status was 200", async () => {
    const controller = new AbortController();
    const stream = await client.chat.completions.create(
      { model: "slow", messages: ask, stream: true },
      { headers: { "x-request-id": "log-aborted" }, signal: controller.signal },
    );
    let chunks = 0;
    try {
      for await (const _chunk of stream) {
        chunks += 1;
        controller.abort();
      }
    } catch {
      // The SDK may report the abort as an error; either way the client has gone.
    }
    assert.equal(chunks, 1, "the client left after its first chunk");
    const line = await requestLine("log-aborted");
    assert.equal(line.status, 200);
    assert.equal(line.outcome, "aborted");
    assert.match(line.msg, /^POST \/v1\/chat\/completions 200 slow \d+ms aborted$/u);
  });

  test("a stream that ended in an error frame: failed, with the error's code", async () => {
    const stream = await client.chat.completions.create(
      { model: "failing", messages: ask, stream: true },
      { headers: { "x-request-id": "log-failed" } },
    );
    await assert.rejects(async () => {
      for await (const _chunk of stream) {
        // The error frame ends the stream.
      }
    });
    const line = await requestLine("log-failed");
    assert.equal(line.status, 200);
    assert.equal(line.outcome, "failed");
    assert.equal(line.errorCode, "internal_error");
    assert.match(line.msg, /^POST \/v1\/chat\/completions 200 failing \d+ms failed internal_error$/u);
  });

  test("an error answer: failed, with its code", async () => {
    await assert.rejects(client.chat.completions.create({ model: "nope", messages: ask }, { headers: { "x-request-id": "log-404" } }));
    const line = await requestLine("log-404");
    assert.equal(line.status, 404);
    assert.equal(line.outcome, "failed");
    assert.equal(line.errorCode, "model_not_found");
  });
});
