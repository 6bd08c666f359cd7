import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Redis } from "ioredis";
import { type RunningServer, startCli } from "../helpers/cli.js";
import { dropSchema, POSTGRES_URL, REDIS_URL, requirePostgres, requireRedis, uniquePrefix, uniqueSchema } from "../helpers/services.js";
import { tempProject } from "../helpers/temp-project.js";

const redis = await requireRedis();
const postgres = await requirePostgres();

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
    // Once per stream: a caller counts the streams that have begun, not their chunks.
    if (body === "") onFirstByte();
    body += decoder.decode(bytes as Uint8Array, { stream: true });
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
    const streams = Array.from({ length: 20 }, (_, index) =>
      stream(server.baseURL, index % 2 === 0 ? "short" : "long", () => {
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

/** What one poll of a draining server saw: an HTTP status, or a connection that was refused. */
type Poll = { at: "ready" | "run"; status: number | "refused"; code?: string; retryAfter?: string | null };

async function poll(baseURL: string): Promise<Poll[]> {
  const ask = async (at: Poll["at"], init: RequestInit & { path: string }): Promise<Poll> => {
    try {
      const response = await fetch(`${baseURL}${init.path}`, { ...init, signal: AbortSignal.timeout(5_000) });
      const body = (await response.json()) as { error?: { code: string } };
      return { at, status: response.status, code: body.error?.code, retryAfter: response.headers.get("retry-after") };
    } catch (error) {
      const code = (error as { cause?: { code?: string } }).cause?.code;
      if (code === "ECONNREFUSED" || code === "ECONNRESET" || code === "UND_ERR_SOCKET") return { at, status: "refused" };
      throw error;
    }
  };
  return Promise.all([
    ask("ready", { path: "/ready" }),
    ask("run", {
      path: "/chat/completions",
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "slow", messages: [{ role: "user", content: "short" }] }),
    }),
  ]);
}

/**
 * Ten open streams, then SIGTERM; every 50 ms until the streams end, /ready and a new chat
 * request: each a 503 (never a refused connection) while the port drains. Then exit 0.
 */
async function drainWhilePolling(server: RunningServer): Promise<void> {
  let streamsEnded = false;
  let signalled: Promise<number | null> | undefined;
  let began = 0;
  const streams = Array.from({ length: 10 }, () =>
    stream(server.baseURL, "long", () => {
      began += 1;
      if (began === 10) signalled = server.stop("SIGTERM");
    }).finally(() => {
      streamsEnded = true;
    }),
  );
  while (signalled === undefined) await new Promise((resolve) => setTimeout(resolve, 10));
  // A moment for the signal to arrive, then poll as a load balancer would.
  await new Promise((resolve) => setTimeout(resolve, 100));
  const polls: Poll[] = [];
  // The streams are all as long: polling stops when the first one ends. A poll during which
  // they ended is left out: the server may have sent their last bytes, found nothing left to
  // drain and closed the port before this client had read those bytes.
  while (!streamsEnded) {
    const seen = await poll(server.baseURL);
    if (!streamsEnded) polls.push(...seen);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const outcomes = await Promise.all(streams);
  for (const outcome of outcomes) assert.deepEqual([outcome.status, outcome.done, outcome.errorCode], [200, true, undefined]);
  assert.ok(polls.length >= 10, `polled ${polls.length} times while the streams were open`);
  const refused = polls.filter((entry) => entry.status === "refused");
  assert.deepEqual(refused, [], "no connection was refused while streams were open");
  for (const entry of polls) {
    assert.equal(entry.status, 503, JSON.stringify(entry));
    if (entry.at === "run") assert.deepEqual([entry.code, entry.retryAfter], ["server_shutting_down", "1"]);
  }
  assert.equal(await signalled, 0, "the server exits 0");
}

describe("the port stays open while it drains", { timeout: 60_000 }, () => {
  const cleanups: (() => unknown)[] = [];
  after(async () => {
    for (const cleanup of cleanups) await cleanup();
  });

  test("one process: /ready and new runs get 503 until the open streams end, then exit 0", async () => {
    const project = tempProject({
      "chat-serve.config.ts": `export default {
  server: { shutdownGraceMs: 10000 },
  graphs: { slow: { graph: "./slow.ts:graph", description: "slow", streamableNodeNames: ["respond"] } },
};`,
      "slow.ts": SLOW_GRAPH,
    });
    cleanups.push(project.cleanup);
    const server = await startCli([], { cwd: project.dir });
    cleanups.push(() => server.stop("SIGKILL"));
    await drainWhilePolling(server);
  });

  test("--workers 2: the same", { skip: redis.skip || postgres.skip }, async () => {
    const schema = uniqueSchema();
    const project = tempProject({
      "chat-serve.config.ts": `export default {
  server: { shutdownGraceMs: 10000 },
  checkpointer: { kind: "postgres", url: "${POSTGRES_URL}", schema: "${schema}" },
  coordinator: { kind: "redis", url: "${REDIS_URL}", keyPrefix: "${uniquePrefix()}" },
  graphs: { slow: { graph: "./slow.ts:graph", description: "slow", streamableNodeNames: ["respond"] } },
};`,
      "slow.ts": SLOW_GRAPH,
    });
    cleanups.push(project.cleanup, () => dropSchema(schema));
    const server = await startCli(["--workers", "2"], { cwd: project.dir });
    cleanups.push(() => server.stop("SIGKILL"));
    await drainWhilePolling(server);
  });
});
