import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { Client } from "@langchain/langgraph-sdk";
import { UserFacingError } from "../../src/errors/catalogue.js";
import { rpc } from "../helpers/a2a.js";
import { loopbackBanner } from "../helpers/banner.js";
import { connectMcp } from "../helpers/mcp.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// A graph's exception text is internal: a secret, a file path and a host in it reach no
// surface (they once reached Agent Protocol clients verbatim), and the log keeps them. A graph
// that means its words for the user throws UserFacingError, and every surface shows them.

const SECRET = "sk-live-0123456789 at /srv/app/graphs/secret.ts via db.internal.example";
const MEANT = "Pick a city first: I cannot tell the weather of nowhere.";

function throwing(error: () => Error) {
  return new StateGraph(MessagesAnnotation)
    .addNode("respond", () => {
      throw error();
    })
    .addEdge(START, "respond")
    .addEdge("respond", END)
    .compile();
}

let server: TestServer;
const logLines: string[] = [];

before(async () => {
  server = await startTestServer(
    {
      leaky: { graph: throwing(() => new Error(`connection failed: ${SECRET}`)), description: "Fails with a secret" },
      polite: { graph: throwing(() => new UserFacingError(MEANT)), description: "Fails for its user" },
    },
    {
      langgraph: true,
      anthropic: true,
      aiSdk: true,
      agUi: true,
      a2a: true,
      mcp: true,
      logger: { level: "error", stream: { write: (line: string) => void logLines.push(line) } },
    },
  );
});
after(() => server.close());

const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
  const response = await fetch(`${server.origin}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return response.text();
};

/** Every answer each surface gives for a run of `model`, as text. */
async function answers(model: string): Promise<Record<string, string>> {
  const user = [{ role: "user", content: "hi" }];
  const seen: Record<string, string> = {
    chat: await post("/v1/chat/completions", { model, messages: user }),
    chatStream: await post("/v1/chat/completions", { model, messages: user, stream: true }),
    responses: await post("/v1/responses", { model, input: "hi" }),
    responsesStream: await post("/v1/responses", { model, input: "hi", stream: true }),
    anthropic: await post("/v1/messages", { model, max_tokens: 100, messages: user }),
    anthropicStream: await post("/v1/messages", { model, max_tokens: 100, messages: user, stream: true }),
    aiSdk: await post(`/v1/ai-sdk/${model}`, { id: "c", messages: [{ id: "m", role: "user", parts: [{ type: "text", text: "hi" }] }] }),
    agUi: await post(`/v1/ag-ui/${model}`, { threadId: randomUUID(), runId: "r", messages: [{ id: "m", role: "user", content: "hi" }] }),
    a2a: JSON.stringify(
      (
        await rpc(`${server.origin}/v1/a2a/${model}`, {
          jsonrpc: "2.0",
          id: 1,
          method: "SendMessage",
          params: { message: { messageId: "m", role: "ROLE_USER", parts: [{ text: "hi" }] } },
        })
      ).body,
    ),
  };
  const mcp = await connectMcp(`${server.origin}/v1/mcp`);
  try {
    seen.mcp = JSON.stringify(await mcp.client.callTool({ name: model, arguments: { message: "hi" } }));
  } finally {
    await mcp.close();
  }
  const client = new Client({ apiUrl: server.origin });
  const thread = await client.threads.create();
  seen.agentWait = JSON.stringify(await client.runs.wait(thread.thread_id, model, { input: { messages: user }, raiseError: false }));
  const streamed: unknown[] = [];
  for await (const chunk of client.runs.stream(thread.thread_id, model, { input: { messages: user } })) streamed.push(chunk);
  seen.agentStream = JSON.stringify(streamed);
  seen.agentThread = JSON.stringify(await client.threads.get(thread.thread_id));
  seen.agentState = JSON.stringify(await client.threads.getState(thread.thread_id));
  seen.agentRuns = JSON.stringify(await client.runs.list(thread.thread_id));
  seen.protocolV2 = await protocolV2Failure(model);
  return seen;
}

/** Protocol v2: a run started by command on a new thread, its events read until it failed. */
async function protocolV2Failure(model: string): Promise<string> {
  const threadId = randomUUID();
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 10_000);
  try {
    const events = await fetch(`${server.origin}/threads/${threadId}/stream/events`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ channels: ["lifecycle"] }),
      signal: controller.signal,
    });
    await post(`/threads/${threadId}/commands`, {
      id: 1,
      method: "run.start",
      params: { assistant_id: model, input: { messages: [{ role: "user", content: "hi" }] } },
    });
    const reader = (events.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = "";
    while (!text.includes('"failed"')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    await reader.cancel();
    return text;
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
}

describe("errors a graph throws", () => {
  test("an ordinary exception's text reaches no surface; the log has it", async () => {
    const seen = await answers("leaky");
    for (const [surface, text] of Object.entries(seen)) {
      for (const needle of ["sk-live", "/srv/app", "db.internal", "connection failed"]) {
        assert.ok(!text.includes(needle), `${surface} shows '${needle}': ${text.slice(0, 600)}`);
      }
    }
    // Each surface did answer with a failure, in its own way.
    assert.match(seen.agentWait ?? "", /"__error__"/u);
    assert.match(seen.agentStream ?? "", /"event":"error"/u);
    assert.match(seen.agentThread ?? "", /"status":"error"/u);
    assert.match(seen.protocolV2 ?? "", /"event":"failed"/u);
    assert.ok(
      logLines.some((line) => line.includes("sk-live-0123456789")),
      "the log keeps the exception's text",
    );
  });

  test("a UserFacingError's message reaches every surface", async () => {
    const seen = await answers("polite");
    for (const [surface, text] of Object.entries(seen)) {
      if (surface === "agentState" || surface === "agentRuns") continue;
      assert.ok(text.includes(MEANT), `${surface} does not show the graph's message: ${text.slice(0, 600)}`);
    }
  });
});

describe("errors a graph throws while its developer runs it (a loopback server without keys)", () => {
  test("reach Agent Protocol clients as the exception's name and message, as under langgraphjs dev", async () => {
    const developing = await startTestServer(
      {
        broken: {
          graph: throwing(() => new TypeError("llm.bind is not a function")),
          description: "A graph with a bug",
        },
      },
      { langgraph: true, developmentErrors: true, logger: false },
    );
    try {
      const client = new Client({ apiUrl: developing.origin });
      const parts: { event: string; data: unknown }[] = [];
      for await (const part of client.runs.stream(null, "broken", { input: { messages: [{ role: "user", content: "hi" }] } })) {
        parts.push(part as { event: string; data: unknown });
      }
      const last = parts.at(-1);
      assert.equal(last?.event, "error");
      assert.deepEqual(last?.data, { error: "TypeError", message: "llm.bind is not a function" });
    } finally {
      await developing.close();
    }
    const shown = loopbackBanner({ developmentErrors: true });
    assert.match(shown, /errors\s+a graph's exception reaches Agent Protocol clients as its name and message/u);
  });
});
