import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { Client } from "@langchain/langgraph-sdk";
import { approvingAgent } from "../fixtures/langgraph-agents/src/agents.js";
import { demoGraphs } from "../helpers/demo-graphs.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// The calls agent-chat-ui (and CopilotKit's LangGraph agent) make through the LangGraph SDK, as
// they make them: its Agent Inbox answers an interrupt with `input: {}` beside `command:
// { resume }` (once a 422), and its thread list searches by `metadata.graph_id` on threads that
// `useStream` created with `metadata: {}` (once always empty).

const user = (content: string) => ({ messages: [{ role: "user", content }] });
const lastText = (values: unknown) => (values as { messages: { content: string }[] }).messages.at(-1)?.content;

const broken = new StateGraph(MessagesAnnotation)
  .addNode("respond", () => {
    throw new Error("broken on purpose");
  })
  .addEdge(START, "respond")
  .addEdge("respond", END)
  .compile();

let server: TestServer;
let client: Client;
const logLines: string[] = [];
before(async () => {
  server = await startTestServer(
    {
      ...demoGraphs(),
      broken: { graph: broken, description: "Always fails" },
      "approving-agent": { graph: approvingAgent, description: "Asks before each weather call" },
    },
    { langgraph: true, logger: { level: "info", stream: { write: (line: string) => void logLines.push(line) } } },
  );
  client = new Client({ apiUrl: server.origin });
});
after(() => server.close());

describe("agent-chat-ui's calls", () => {
  test("an interrupt answered with input: {} and command: { resume } resumes, the input unread", async () => {
    const thread = await client.threads.create({ metadata: {} });
    await client.runs.wait(thread.thread_id, "approval", { input: user("deploy") });
    assert.equal((await client.threads.get(thread.thread_id)).status, "interrupted");
    const parts: { event: string; data: unknown }[] = [];
    for await (const part of client.runs.stream(thread.thread_id, "approval", {
      input: {},
      command: { resume: "approve" },
      streamMode: ["values"],
    })) {
      parts.push(part);
    }
    assert.ok(!parts.some((part) => part.event === "error"), JSON.stringify(parts.filter((part) => part.event === "error")));
    assert.equal(lastText(parts.findLast((part) => part.event === "values")?.data), "Approved: going ahead with deploy.");
  });

  test("the thread list by metadata.graph_id finds the threads a run used, with their assistant", async () => {
    const thread = await client.threads.create({ metadata: {} });
    await client.runs.wait(thread.thread_id, "echo", { input: user("hello") });
    const found = await client.threads.search({ metadata: { graph_id: "echo" } });
    assert.ok(found.some((candidate) => candidate.thread_id === thread.thread_id));
    const [assistant] = await client.assistants.search({ graphId: "echo" });
    const listed = found.find((candidate) => candidate.thread_id === thread.thread_id);
    assert.equal(listed?.metadata?.assistant_id, assistant?.assistant_id);
    assert.equal(listed?.metadata?.graph_id, "echo");
  });

  test("a model with client settings runs on its defaults when no context is sent; a bad value is a 422 naming it", async () => {
    for (const options of [{}, { context: {} }]) {
      const values = await client.runs.wait(null, "research", { input: user("What is LangGraph?"), ...options });
      assert.match(JSON.stringify(values), /I looked at 2 sources/u);
    }
    const deep = await client.runs.wait(null, "research", { input: user("What is LangGraph?"), context: { depth: 4 } } as never);
    assert.match(JSON.stringify(deep), /I looked at 4 sources/u);
    await assert.rejects(
      (async () => {
        for await (const _ of client.runs.stream(null, "research", { input: user("x"), context: { depth: "deep" } } as never)) {
          // the stream never starts
        }
      })(),
      (error: Error) => /422/u.test(error.message) && /context\.depth/u.test(error.message),
    );
  });

  test("the request log says failed for a stream whose run failed", async () => {
    for await (const _ of client.runs.stream(null, "broken", { input: user("x") })) {
      // read to the end
    }
    const line = logLines
      .map((text) => JSON.parse(text) as { msg?: string })
      .find((entry) => /POST \/runs\/stream 200/u.test(entry.msg ?? ""));
    assert.match(line?.msg ?? "", /failed InternalError$/u);
  });

  test("createAgent's human-in-the-loop middleware answered as the Agent Inbox answers it: { decisions: [...] }", async () => {
    const thread = await client.threads.create({ metadata: {} });
    await client.runs.wait(thread.thread_id, "approving-agent", { input: user("weather in Oslo?") });
    const paused = await client.threads.get(thread.thread_id);
    assert.equal(paused.status, "interrupted");
    const [request] = Object.values(paused.interrupts).flat() as { value: { actionRequests: { name: string }[] } }[];
    assert.equal(request?.value.actionRequests[0]?.name, "get_weather");
    const done = await client.runs.wait(thread.thread_id, "approving-agent", {
      input: {},
      command: { resume: { decisions: [{ type: "approve" }] } },
    });
    assert.equal(lastText(done), "The forecast says it is sunny and 21 degrees in Oslo, a fine day to go out.");
  });
});
