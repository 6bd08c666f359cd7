import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import OpenAI from "openai";
import { loopbackBanner } from "../helpers/banner.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// A graph whose state has no `messages` (a question in, an answer out) is said at start, with
// the key to set, and the chat surfaces refuse it before it runs, saying the same.

let ran = 0;
const qa = new StateGraph(Annotation.Root({ question: Annotation<string>, answer: Annotation<string> }))
  .addNode("respond", (state) => {
    ran += 1;
    return { answer: `you asked: ${state.question}` };
  })
  .addEdge(START, "respond")
  .addEdge("respond", END)
  .compile();

let server: TestServer;
before(async () => {
  server = await startTestServer({ qa: { graph: qa, description: "Answers a question" } }, {});
});
after(() => server.close());

test("the start names the model and the key to set", async () => {
  assert.deepEqual(await server.serve.registry.withoutMessages(), ["qa"]);
  const text = loopbackBanner({ firstModel: "qa", withoutMessages: ["qa"] });
  assert.match(text, /warning model 'qa': its state has no 'messages' key, .* set graphs\.qa\.requestToInput in chat-serve\.config\.ts/u);
});

test("a chat completion is refused before the graph runs, saying what to set", async () => {
  const client = new OpenAI({ baseURL: server.baseURL, apiKey: "x", maxRetries: 0 });
  await assert.rejects(client.chat.completions.create({ model: "qa", messages: [{ role: "user", content: "why?" }] }), (error: Error) => {
    assert.match(error.message, /Model 'qa' has no 'messages' key in its state.*requestToInput/u);
    return true;
  });
  assert.equal(ran, 0, "the graph never ran");
});
