import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Redis } from "ioredis";
import { type RunningServer, startCli } from "../helpers/cli.js";
import { REDIS_URL, requireRedis, uniquePrefix } from "../helpers/services.js";
import { tempProject } from "../helpers/temp-project.js";

const redis = await requireRedis();

// An interrupt graph (so every run holds a Redis lease) that streams a short or a long answer.
const SLOW_GRAPH = `
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ScriptedChatModel } from "chat-serve/testing";
const model = new ScriptedChatModel({
  respond: (messages) => (messages.at(-1)?.text === "long" ? "word ".repeat(40).trim() : "a short answer"),
  chunkDelayMs: 50,
});
export const graph = new StateGraph(MessagesAnnotation)
  .addNode("respond", async (state, config) => ({ messages: [await model.invoke(state.messages, config)] }))
  .addEdge(START, "respond").addEdge("respond", END).compile();
`;

interface StreamOutcome {
  status: number;
  text: string;
  done: boolean;
  errorCode: string | undefined;
}

/** One streamed request, read to its end: its text, whether it ended with [DONE], and any error frame. */
async function stream(baseURL: string, content: string, onFirstByte: () => void): Promise<StreamOutcome> {
  const response = await fetch(`${baseURL}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "slow", stream: true, messages: [{ role: "user", content }] }),
  });
  const outcome: StreamOutcome = { status: response.status, text: "", done: false, errorCode: undefined };
  let body = "";
  const decoder = new TextDecoder();
  for await (const bytes of response.body!) {
    body += decoder.decode(bytes as Uint8Array, { stream: true });
    onFirstByte();
  }
  for (const frame of body.split("\n\n")) {
    if (!frame.startsWith("data: ")) continue;
    const data = frame.slice(6);
    if (data === "[DONE]") outcome.done = true;
    else {
      const chunk = JSON.parse(data);
      if (chunk.error) outcome.errorCode = chunk.error.code;
      outcome.text += chunk.choices?.[0]?.delta?.content ?? "";
    }
  }
  return outcome;
}

describe("draining on SIGTERM", { skip: redis.skip }, () => {
  const keyPrefix = uniquePrefix();
  const project = tempProject({
    "chat-serve.config.ts": `export default {
  server: { shutdownGraceMs: 700 },
  coordinator: { kind: "redis", url: "${REDIS_URL}", keyPrefix: "${keyPrefix}" },
  graphs: { slow: { graph: "./slow.ts:graph", description: "slow", features: ["INTERRUPTS"], streamableNodeNames: ["respond"] } },
};`,
    "slow.ts": SLOW_GRAPH,
  });
  let server: RunningServer;
  let client: Redis;
  before(async () => {
    server = await startCli([], { cwd: project.dir });
    client = new Redis(REDIS_URL, { lazyConnect: true });
    await client.connect();
  });
  after(async () => {
    await server?.stop("SIGKILL");
    client?.disconnect();
    project.cleanup();
  });

  test("20 open streams: the short ones finish, the long ones end with a server_shutting_down frame; no lease is left; exit 0", async () => {
    let started = 0;
    let signalled: Promise<number | null> | undefined;
    const firstBytes = new Set<number>();
    const streams = Array.from({ length: 20 }, (_, index) =>
      stream(server.baseURL, index % 2 === 0 ? "short" : "long", () => {
        if (firstBytes.has(index)) return;
        firstBytes.add(index);
        started += 1;
        // Once every stream has begun, stop the server.
        if (started === 20) signalled = server.stop("SIGTERM");
      }),
    );
    const outcomes = await Promise.all(streams);
    for (const [index, outcome] of outcomes.entries()) {
      assert.equal(outcome.status, 200);
      if (index % 2 === 0) {
        assert.deepEqual(outcome, { status: 200, text: "a short answer", done: true, errorCode: undefined }, `stream ${index}`);
      } else {
        assert.equal(outcome.errorCode, "server_shutting_down", `stream ${index} ends with an error frame`);
        assert.ok(outcome.text.length < "word ".repeat(40).trim().length, `stream ${index} was cut`);
      }
    }
    assert.equal(await signalled, 0, "the server exits 0");
    assert.deepEqual(await client.keys(`${keyPrefix}*`), [], "no lease is left held");
  });
});
