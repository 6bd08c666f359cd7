import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { ChatServe, GraphRegistry } from "chat-serve";
import OpenAI from "openai";
import { graph } from "../graphs/assistant.ts";

let app: Awaited<ReturnType<ChatServe["bind"]>>;
let client: OpenAI;

before(async () => {
  const serve = new ChatServe({
    graphs: new GraphRegistry({ assistant: { graph, description: "test", streamableNodeNames: ["respond"] } }),
  });
  app = await serve.bind({ prefix: "/v1" });
  const address = await app.listen({ host: "127.0.0.1", port: 0 });
  client = new OpenAI({ baseURL: `${address}/v1`, apiKey: "not-needed" });
});
after(() => app.close());

test("the assistant answers through the OpenAI client", async () => {
  const completion = await client.chat.completions.create({
    model: "assistant",
    messages: [{ role: "user", content: "hi there" }],
  });
  assert.equal(completion.choices[0]?.message.content, "Hello! You said: hi there");
});

test("the assistant streams the same answer", async () => {
  const stream = await client.chat.completions.create({
    model: "assistant",
    messages: [{ role: "user", content: "hi there" }],
    stream: true,
  });
  let text = "";
  for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
  assert.equal(text, "Hello! You said: hi there");
});
