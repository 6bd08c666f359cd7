import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createOpenAI } from "@ai-sdk/openai";
import { MemorySaver } from "@langchain/langgraph";
import { ChatOpenAI } from "@langchain/openai";
import { Agent, OpenAIResponsesModel, run, setTracingDisabled, tool } from "@openai/agents";
import { tool as aiTool, generateText, jsonSchema, streamText } from "ai";
import OpenAI from "openai";
import { z } from "zod";
import { graph as approvalGraph } from "../../demo/graphs/approval.js";
import { graph as echoGraph } from "../../demo/graphs/echo.js";
import { graph as toolsGraph } from "../../demo/graphs/tools.js";
import { ChatServe } from "../../src/app/chat-serve.js";
import { InMemoryRunCoordinator } from "../../src/coordination/in-memory-run-coordinator.js";
import { GraphRegistry } from "../../src/registry/graph-registry.js";

// The Agents SDK would export traces to OpenAI; there is nothing to reach here.
setTracingDisabled(true);

let baseURL: string;
let close: () => Promise<void>;

before(async () => {
  const registry = new GraphRegistry(
    {
      echo: { graph: echoGraph, description: "Echo", streamableNodeNames: ["respond"] },
      approval: { graph: approvalGraph, description: "Approval", features: ["INTERRUPTS"] },
      tools: { graph: toolsGraph, description: "Tools", streamableNodeNames: ["agent"] },
    },
    { runCoordinator: new InMemoryRunCoordinator(), checkpointer: new MemorySaver() },
  );
  const app = await new ChatServe({ graphs: registry }).bind();
  baseURL = `${await app.listen({ host: "127.0.0.1", port: 0 })}/v1`;
  close = () => app.close();
});
after(() => close());

describe("the OpenAI Agents SDK", () => {
  const model = (name: string) => new OpenAIResponsesModel(new OpenAI({ baseURL, apiKey: "x", maxRetries: 0 }), name);

  test("run(agent, input) returns the graph's answer", async () => {
    const agent = new Agent({ name: "echo", model: model("echo") });
    const result = await run(agent, "hello from an agent");
    assert.equal(result.finalOutput, "hello from an agent");
  });

  test("streaming works", async () => {
    const agent = new Agent({ name: "echo", model: model("echo") });
    const stream = await run(agent, "streamed agent words", { stream: true });
    let text = "";
    for await (const event of stream.toTextStream()) text += event;
    await stream.completed;
    assert.equal(text, "streamed agent words");
    assert.equal(stream.finalOutput, "streamed agent words");
  });

  test("an interrupt round trip through the SDK's function-tool flow", async () => {
    const questions: string[] = [];
    const answerInterrupt = tool({
      name: "graph_interrupt",
      description: "Answers a question the graph asks a person.",
      parameters: z.object({
        run_id: z.string(),
        state_token: z.string(),
        payload: z.object({ question: z.string(), options: z.array(z.string()) }),
      }),
      execute: async ({ payload }) => {
        questions.push(payload.question);
        return "approve";
      },
    });
    const agent = new Agent({ name: "approval", model: model("approval"), tools: [answerInterrupt] });
    const result = await run(agent, "rotate the keys");
    assert.deepEqual(questions, ["May I go ahead with: rotate the keys?"]);
    assert.equal(result.finalOutput, "Approved: going ahead with rotate the keys.");
  });
});

describe("the AI SDK's Responses model", () => {
  const provider = () => createOpenAI({ baseURL, apiKey: "x" });

  test("generateText", async () => {
    const result = await generateText({ model: provider().responses("echo"), prompt: "hello ai sdk" });
    assert.equal(result.text, "hello ai sdk");
    assert.equal(result.usage.outputTokens, 3);
  });

  test("streamText", async () => {
    const result = streamText({ model: provider().responses("echo"), prompt: "streamed ai sdk words" });
    let text = "";
    for await (const delta of result.textStream) text += delta;
    assert.equal(text, "streamed ai sdk words");
  });

  test("tool calls, answered (with store off, so history travels as items)", async () => {
    const result = await generateText({
      model: provider().responses("tools"),
      prompt: "What is the weather in Lima?",
      tools: {
        get_weather: aiTool({
          description: "The weather in a city",
          inputSchema: jsonSchema<{ city: string }>({ type: "object", properties: { city: { type: "string" } }, required: ["city"] }),
          execute: async ({ city }) => `cloudy in ${city}`,
        }),
      },
      stopWhen: ({ steps }) => steps.length >= 2,
      providerOptions: { openai: { store: false } },
    });
    assert.equal(result.steps[0]?.toolCalls[0]?.toolName, "get_weather");
    assert.equal(result.text, "The weather tool says: cloudy in Lima");
  });
});

describe("LangChain's ChatOpenAI with useResponsesApi", () => {
  const chat = (name: string) =>
    new ChatOpenAI({ model: name, apiKey: "x", useResponsesApi: true, maxRetries: 0, configuration: { baseURL } });

  test("invoke and stream", async () => {
    const reply = await chat("echo").invoke("hello langchain");
    assert.equal(reply.text, "hello langchain");
    assert.equal(reply.usage_metadata?.output_tokens, 2);
    let streamed = "";
    for await (const chunk of await chat("echo").stream("streamed langchain words")) streamed += chunk.text;
    assert.equal(streamed, "streamed langchain words");
  });
});
