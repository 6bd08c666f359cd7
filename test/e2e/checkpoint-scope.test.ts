import assert from "node:assert/strict";
import { test } from "node:test";
import OpenAI from "openai";
import { startCli } from "../helpers/cli.js";
import { answerBatch } from "../helpers/resume.js";
import { tempProject } from "../helpers/temp-project.js";

test("checkpointScope from the config file isolates runs by tenant", { timeout: 60_000 }, async () => {
  const { dir, cleanup } = tempProject({
    "chat-serve.config.ts": `
export default {
  // A real deployment derives the tenant from authentication; a header stands in for it here.
  checkpointScope: "./scope.ts:tenantOf",
  graphs: { ask: { graph: "./graph.ts:graph", description: "asks", features: ["INTERRUPTS"] } },
};`,
    "scope.ts": `export async function tenantOf(request) { return String(request.headers["x-tenant"] ?? "anonymous"); }`,
    "graph.ts": `
import { AIMessage } from "@langchain/core/messages";
import { END, interrupt, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
export const graph = new StateGraph(MessagesAnnotation)
  .addNode("ask", () => ({ messages: [new AIMessage("answer: " + interrupt("sure?"))] }))
  .addEdge(START, "ask").addEdge("ask", END).compile();
`,
  });
  const server = await startCli([], { cwd: dir });
  try {
    const as = (tenant: string) =>
      new OpenAI({ baseURL: server.baseURL, apiKey: "x", maxRetries: 0, defaultHeaders: { "x-tenant": tenant } });
    const history: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: "user", content: "go" }];
    const paused = await as("acme").chat.completions.create({ model: "ask", messages: history });
    const calls = paused.choices[0]!.message.tool_calls!;
    const resume = answerBatch(history, calls, "yes");
    await assert.rejects(
      as("globex").chat.completions.create({ model: "ask", messages: resume }),
      (error: InstanceType<typeof OpenAI.APIError>) => {
        assert.equal(error.status, 409);
        assert.equal(error.code, "interrupt_state_conflict");
        return true;
      },
    );
    const done = await as("acme").chat.completions.create({ model: "ask", messages: resume });
    assert.equal(done.choices[0]?.message.content, "answer: yes");
  } finally {
    await server.stop("SIGTERM");
    cleanup();
  }
});
