import assert from "node:assert/strict";
import { after, test } from "node:test";
import OpenAI from "openai";
import { startCli } from "../helpers/cli.js";
import { eventually } from "../helpers/eventually.js";
import { answerBatch } from "../helpers/resume.js";
import { tempProject } from "../helpers/temp-project.js";

// `chat-serve start` with the embedded backends: the store's retention expires stored
// responses, and, with no pendingRuns setting, paused runs too.

const cleanups: (() => unknown)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

test("with the memory store and checkpointer, stored responses and paused runs expire after store.expireAfter", {
  timeout: 60_000,
}, async () => {
  const project = tempProject({
    "chat-serve.config.ts": `export default {
  store: { kind: "memory", expireAfter: "1s", sweepEvery: "1s" },
  graphs: {
    ask: { graph: "./ask.ts:graph", description: "asks", features: ["INTERRUPTS"] },
    echo: { graph: "./ask.ts:echo", description: "echoes" },
  },
};`,
    "ask.ts": `
import { AIMessage } from "@langchain/core/messages";
import { END, interrupt, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
export const graph = new StateGraph(MessagesAnnotation)
  .addNode("ask", () => ({ messages: [new AIMessage("answer: " + interrupt({ question: "Proceed?" }))] }))
  .addEdge(START, "ask").addEdge("ask", END).compile();
export const echo = new StateGraph(MessagesAnnotation)
  .addNode("respond", (state) => ({ messages: [new AIMessage("echo: " + state.messages.at(-1).text)] }))
  .addEdge(START, "respond").addEdge("respond", END).compile();
`,
  });
  cleanups.push(project.cleanup);
  const server = await startCli([], { cwd: project.dir, env: { LOG_LEVEL: "info", LOG_FORMAT: "json" } });
  cleanups.push(() => server.stop("SIGKILL"));
  // The banner follows the ready line.
  await eventually(async () => {
    assert.match(server.output(), /stored\s+responses and conversations in memory: lost at restart/u);
  }, 5_000);
  const client = new OpenAI({ baseURL: server.baseURL, apiKey: "x", maxRetries: 0 });
  const stored = await client.responses.create({ model: "echo", input: "soon gone" });
  const history = [{ role: "user" as const, content: "go" }];
  const paused = await client.chat.completions.create({ model: "ask", messages: history });
  const calls = paused.choices[0]!.message.tool_calls as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall[];
  await eventually(async () => {
    await assert.rejects(
      client.responses.retrieve(stored.id),
      (error: InstanceType<typeof OpenAI.APIError>) => error.status === 404,
      "the response expired",
    );
  }, 10_000);
  // The sweep of paused runs says so in the log.
  await eventually(async () => {
    assert.match(server.output(), /expired 1 pending run/u, "the paused run expired");
  }, 10_000);
  await assert.rejects(
    client.chat.completions.create({ model: "ask", messages: answerBatch(history, calls, "yes") }),
    (error: InstanceType<typeof OpenAI.APIError>) => error.status === 409 && /This run expired/u.test(error.message),
  );
  assert.equal(await server.stop(), 0);
});
