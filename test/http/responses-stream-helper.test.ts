import assert from "node:assert/strict";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { FastifyInstance } from "fastify";
import OpenAI from "openai";
import { ChatServe } from "../../src/app/chat-serve.js";
import { loadConfig } from "../../src/config/load-config.js";
import { registryFromConfig } from "../../src/server/from-config.js";
import { REPO_ROOT } from "../helpers/cli.js";
import { assertMatchesResponses } from "../helpers/openai-schema.js";

// The openai SDK's stream helper (`client.responses.stream()`) accumulates the response from the
// events and throws on any event type it does not know: every demo model of the repository's own
// config, through it.
describe("the openai SDK's Responses stream helper on every demo model", () => {
  let app: FastifyInstance;
  let client: OpenAI;
  before(async () => {
    const loaded = await loadConfig({ configPath: path.join(REPO_ROOT, "chat-serve.config.ts") });
    const serve = new ChatServe({ graphs: await registryFromConfig(loaded) });
    app = await serve.bind({ prefix: "/v1" });
    const origin = await app.listen({ host: "127.0.0.1", port: 0 });
    client = new OpenAI({ baseURL: `${origin}/v1`, apiKey: "unused" });
  });
  after(async () => {
    await app.close();
  });

  const cases: [model: string, input: string, expect: (response: OpenAI.Responses.Response) => void][] = [
    ["echo", "hello stream helper", (response) => assert.equal(response.output_text, "hello stream helper")],
    ["plain", "hi", (response) => assert.ok(response.output_text.length > 0)],
    ["tools", "What is the weather in Lisbon?", (response) => assert.equal(response.output[0]?.type, "function_call")],
    ["research", "Why do cats purr?", (response) => assert.ok(response.output_text.length > 0)],
    ["research-deep", "Why is the sky blue?", (response) => assert.ok(response.output_text.length > 0)],
    ["approval", "ship the release", (response) => assert.equal(response.output.at(-1)?.type, "function_call")],
    [
      "think",
      "Why is the sea salty?",
      (response) => {
        const reasoning = response.output.find((item) => item.type === "reasoning");
        assert.ok(reasoning?.type === "reasoning" && (reasoning.content?.[0]?.text.length ?? 0) > 0, "the reasoning was accumulated");
        assert.ok(response.output_text.length > 0);
      },
    ],
    ["memory", "remember the lighthouse", (response) => assert.match(response.output_text, /lighthouse/u)],
  ];
  for (const [model, input, expect] of cases) {
    test(model, async () => {
      const stream = client.responses.stream({ model, input });
      const types = new Set<string>();
      for await (const event of stream) {
        types.add(event.type);
        assertMatchesResponses("ResponseStreamEvent", event);
      }
      const response = await stream.finalResponse();
      assert.equal(response.status === "completed" || response.status === "incomplete", true);
      expect(response);
      if (model === "think") assert.ok(types.has("response.reasoning_text.delta"), [...types].join(", "));
    });
  }
});
