import assert from "node:assert/strict";
import { test } from "node:test";
import OpenAI from "openai";
import { startCli } from "../helpers/cli.js";
import { answerBatch } from "../helpers/resume.js";
import { tempProject } from "../helpers/temp-project.js";

test("a CommonJS project's TypeScript config and graphs load and serve, interrupts included", { timeout: 60_000 }, async () => {
  const { dir, cleanup } = tempProject({
    "package.json": JSON.stringify({ name: "cjs-project", private: true, type: "commonjs" }),
    "chat-serve.config.ts": `
const config = {
  graphs: {
    hello: { graph: "./graphs/hello.ts:graph", description: "CommonJS graph" },
    ask: { graph: "./graphs/hello.ts:askGraph", description: "CommonJS interrupt graph", features: ["INTERRUPTS"] },
  },
};
export default config;
`,
    "graphs/hello.ts": `
import { AIMessage } from "@langchain/core/messages";
import { END, interrupt, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
export const graph = new StateGraph(MessagesAnnotation)
  .addNode("respond", (state) => ({ messages: [new AIMessage("hello from " + typeof module)] }))
  .addEdge(START, "respond").addEdge("respond", END).compile();
export const askGraph = new StateGraph(MessagesAnnotation)
  .addNode("ask", () => ({ messages: [new AIMessage("answer: " + interrupt("sure?"))] }))
  .addEdge(START, "ask").addEdge("ask", END).compile();
`,
  });
  const server = await startCli([], { cwd: dir });
  try {
    const client = new OpenAI({ baseURL: server.baseURL, apiKey: "x", maxRetries: 0 });
    const hello = await client.chat.completions.create({ model: "hello", messages: [{ role: "user", content: "hi" }] });
    assert.equal(hello.choices[0]?.message.content, "hello from object");
    const history: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: "user", content: "go" }];
    const paused = await client.chat.completions.create({ model: "ask", messages: history });
    const calls = paused.choices[0]!.message.tool_calls!;
    const done = await client.chat.completions.create({
      model: "ask",
      messages: answerBatch(history, calls, "yes"),
    });
    assert.equal(done.choices[0]?.message.content, "answer: yes");
  } finally {
    await server.stop("SIGTERM");
    cleanup();
  }
});
