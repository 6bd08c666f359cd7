import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { tool } from "@langchain/core/tools";
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import OpenAI from "openai";
import { z } from "zod";
import { ScriptedChatModel } from "../../src/testing/scripted-chat-model.js";
import { assertMatchesOpenAI, assertMatchesResponses } from "../helpers/openai-schema.js";
import { threadCount } from "../helpers/recall-graphs.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// Graphs compiled the way LangGraph's tutorials compile them: with a checkpointer of their own.
// LangGraph runs such a graph only on a thread; a request that names no conversation (and
// stores nothing to continue: chat completions without a session, Responses with store:
// false) runs on a fresh thread that is deleted when the run ends.

const tutorialSaver = new MemorySaver();
const agentSaver = new MemorySaver();

function tutorialGraph() {
  const model = new ScriptedChatModel({ respond: (messages) => `You said: ${messages.at(-1)?.text ?? ""}` });
  return new StateGraph(MessagesAnnotation)
    .addNode("chatbot", async (state, config) => ({ messages: [await model.invoke(state.messages, config)] }))
    .addEdge(START, "chatbot")
    .addEdge("chatbot", END)
    .compile({ checkpointer: tutorialSaver });
}

function reactAgent() {
  const getTime = tool(async () => "12:00", { name: "get_time", description: "The time now", schema: z.object({}) });
  const model = new ScriptedChatModel({
    respond: (messages) =>
      messages.at(-1)?.type === "tool" ? `It is ${messages.at(-1)?.text}.` : { text: "", toolCalls: [{ name: "get_time", args: {} }] },
  });
  return createReactAgent({ llm: model, tools: [getTime], checkpointSaver: agentSaver });
}

const threads = threadCount;

let server: TestServer;
let client: OpenAI;
before(async () => {
  server = await startTestServer({
    tutorial: { graph: tutorialGraph(), description: "A tutorial chatbot", streamableNodeNames: ["chatbot"] },
    agent: { graph: reactAgent(), description: "A prebuilt ReAct agent", streamableNodeNames: ["agent"] },
  });
  client = new OpenAI({ baseURL: server.baseURL, apiKey: "x", maxRetries: 0 });
});
after(() => server.close());

describe("a graph compiled with its own checkpointer", () => {
  test("answers on both APIs, complete and streamed, and leaves no thread behind", async () => {
    const completion = await client.chat.completions.create({ model: "tutorial", messages: [{ role: "user", content: "hello" }] });
    assertMatchesOpenAI("CreateChatCompletionResponse", completion);
    assert.equal(completion.choices[0]!.message.content, "You said: hello");
    const stream = await client.chat.completions.create({
      model: "tutorial",
      messages: [{ role: "user", content: "again" }],
      stream: true,
    });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    assert.equal(text, "You said: again");
    const response = await client.responses.create({ model: "tutorial", input: "hi there", store: false });
    assertMatchesResponses("Response", response);
    assert.equal(response.output_text, "You said: hi there");
    const streamed = await client.responses.stream({ model: "tutorial", input: "once more", store: false }).finalResponse();
    assert.equal(streamed.output_text, "You said: once more");
    assert.equal(threads(tutorialSaver), 0, "every run's thread was deleted when it ended");
  });

  test("each request stands alone: nothing of an earlier request reaches the next", async () => {
    await client.chat.completions.create({ model: "tutorial", messages: [{ role: "user", content: "first" }] });
    const second = await client.chat.completions.create({ model: "tutorial", messages: [{ role: "user", content: "second" }] });
    assert.equal(second.choices[0]!.message.content, "You said: second");
  });

  test("LangGraph's prebuilt ReAct agent with a checkpointer runs its tool loop", async () => {
    const completion = await client.chat.completions.create({ model: "agent", messages: [{ role: "user", content: "What time is it?" }] });
    assert.equal(completion.choices[0]!.message.content, "It is 12:00.");
    assert.equal(threads(agentSaver), 0);
  });
});
