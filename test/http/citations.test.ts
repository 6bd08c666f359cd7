import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import OpenAI from "openai";
import { ResearchSettings, graph as researchGraph } from "../../demo/graphs/research.js";
import { assertMatchesOpenAI } from "../helpers/openai-schema.js";
import { parseSse, startTestServer, type TestServer } from "../helpers/server.js";

function answerWith(content: unknown) {
  return new StateGraph(MessagesAnnotation)
    .addNode("answer", () => ({ messages: [new AIMessage({ content: content as never })] }))
    .addEdge(START, "answer")
    .addEdge("answer", END)
    .compile();
}

const multiBlock = [
  { type: "text", text: "Über Kaffee ☕: " },
  {
    type: "text",
    text: "Espresso kommt aus Italien.",
    annotations: [{ url: "https://it.example", title: "Italia", start_index: 19, end_index: 25 }],
  },
];

let server: TestServer;
let client: OpenAI;
before(async () => {
  server = await startTestServer({
    research: { graph: researchGraph, description: "Research", streamableNodeNames: ["answer"], clientSettings: ResearchSettings },
    "multi-block": { graph: answerWith(multiBlock), description: "Two blocks" },
    "bad-citation": {
      graph: answerWith([{ type: "text", text: "tiny", annotations: [{ url: "https://x", start_index: 2, end_index: 40 }] }]),
      description: "Cites past its text",
    },
  });
  client = new OpenAI({ baseURL: server.baseURL, apiKey: "x", maxRetries: 0 });
});
after(() => server.close());

const messages = [{ role: "user" as const, content: "Why is the sky blue?" }];

async function streamedAnnotations(model: string) {
  const stream = await client.chat.completions.create({ model, messages, stream: true });
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  for (const chunk of chunks) assertMatchesOpenAI("CreateChatCompletionStreamResponse", chunk);
  const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("");
  const withAnnotations = chunks.filter((chunk) => (chunk.choices[0]?.delta as { annotations?: unknown } | undefined)?.annotations);
  assert.equal(withAnnotations.length, 1, "annotations ride on one chunk");
  assert.ok(withAnnotations[0]?.choices[0]?.finish_reason, "the final delta");
  return { text, annotations: (withAnnotations[0]!.choices[0]!.delta as { annotations: unknown[] }).annotations };
}

for (const model of ["research", "multi-block"]) {
  test(`${model}: complete and streamed responses carry the same annotations, pointing at the cited text`, async () => {
    const completion = await client.chat.completions.create({ model, messages });
    assertMatchesOpenAI("CreateChatCompletionResponse", completion);
    const message = completion.choices[0]!.message;
    assert.equal(message.annotations?.length, 1);
    const streamed = await streamedAnnotations(model);
    assert.deepEqual(streamed.annotations, message.annotations);
    assert.equal(streamed.text, message.content);
    const citation = message.annotations![0]!.url_citation;
    const cited = Array.from(message.content ?? "")
      .slice(citation.start_index, citation.end_index + 1)
      .join("");
    assert.equal(cited, model === "research" ? "2 sources" : "Italien");
  });
}

test("a citation whose indices do not fit is a server error for that request, not a crash", async () => {
  await assert.rejects(
    client.chat.completions.create({ model: "bad-citation", messages }),
    (error: InstanceType<typeof OpenAI.APIError>) => {
      assert.equal(error.status, 500);
      assert.equal(error.code, "graph_configuration_error");
      assert.match(error.message, /invalid citation/);
      return true;
    },
  );
  const response = await fetch(`${server.baseURL}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "bad-citation", messages, stream: true }),
  });
  const frames = parseSse(await response.text());
  assert.equal((frames.at(-2) as { error: { code: string } }).error.code, "graph_configuration_error");
  assert.equal(frames.at(-1), "[DONE]");
  // The server is still serving.
  assert.equal((await client.chat.completions.create({ model: "multi-block", messages })).choices.length, 1);
});
