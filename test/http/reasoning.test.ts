import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { generateText, streamText } from "ai";
import OpenAI from "openai";
import { graph as thinkGraph } from "../../demo/graphs/think.js";
import { ScriptedChatModel } from "../../src/testing/scripted-chat-model.js";
import { chatOpenAIGraph, startLoopbackProvider } from "../helpers/loopback-provider.js";
import { assertMatchesOpenAI, assertMatchesResponses } from "../helpers/openai-schema.js";
import { parseSse, startTestServer, type TestServer } from "../helpers/server.js";

const THOUGHT = "The user wants a plan. Three steps will do.";
const ANSWER = "First plan, then build, then ship.";

/** A model that reasons as OpenAI's reasoning models summarise it (`additional_kwargs.reasoning`). */
function summaryGraph() {
  const model = new ScriptedChatModel({ respond: () => ({ text: ANSWER, reasoning: THOUGHT, reasoningForm: "summary" }) });
  return new StateGraph(MessagesAnnotation)
    .addNode("plan", async (state, config) => ({ messages: [await model.invoke(state.messages, config)] }))
    .addEdge(START, "plan")
    .addEdge("plan", END)
    .compile();
}

/** Answers with the text of the last assistant message it was given: what the graph saw of the history. */
function historyGraph() {
  return new StateGraph(MessagesAnnotation)
    .addNode("show", (state) => ({
      messages: [new AIMessage(`saw: ${[...state.messages].reverse().find((message) => message.type === "ai")?.text ?? "nothing"}`)],
    }))
    .addEdge(START, "show")
    .addEdge("show", END)
    .compile();
}

let provider: Awaited<ReturnType<typeof startLoopbackProvider>>;
let server: TestServer;
let client: OpenAI;

before(async () => {
  // A DeepSeek-style provider: reasoning_content beside the content, streamed or not.
  provider = await startLoopbackProvider((request) => {
    if (request.stream !== true) {
      const message = { role: "assistant", content: "Done thinking.", reasoning_content: "Let me think." };
      return {
        body: JSON.stringify({
          id: "c1",
          object: "chat.completion",
          created: 1,
          model: "deepseek-test",
          choices: [{ index: 0, message, finish_reason: "stop" }],
        }),
      };
    }
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "deepseek-test", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    return {
      headers: { "content-type": "text/event-stream" },
      body:
        chunk({ role: "assistant", content: "", reasoning_content: "Let me " }) +
        chunk({ reasoning_content: "think." }) +
        chunk({ content: "Done " }) +
        chunk({ content: "thinking." }) +
        chunk({}, "stop") +
        "data: [DONE]\n\n",
    };
  });
  server = await startTestServer(
    {
      think: { graph: thinkGraph, description: "Thinks", streamableNodeNames: ["think"] },
      quiet: { graph: thinkGraph, description: "Thinks, but keeps it to itself", streamableNodeNames: ["think"], reasoning: false },
      summary: { graph: summaryGraph(), description: "Summarised reasoning", streamableNodeNames: ["plan"] },
      history: { graph: historyGraph(), description: "Shows the history it got" },
      deepseek: {
        graph: chatOpenAIGraph(provider.baseURL),
        description: "A DeepSeek-style provider",
        streamableNodeNames: ["respond"],
      },
    },
    { profiles: { "chat-ui": { prefix: "/ui/v1" } } },
  );
  client = new OpenAI({ baseURL: server.baseURL, apiKey: "x", maxRetries: 0 });
});
after(async () => {
  await server.close();
  await provider.close();
});

type ReasoningMessage = { content: string | null; reasoning_content?: string; reasoning?: string };

describe("chat completions", () => {
  test("complete: reasoning_content and reasoning beside the answer, never in it", async () => {
    const completion = await client.chat.completions.create({ model: "think", messages: [{ role: "user", content: "Ship it?" }] });
    assertMatchesOpenAI("CreateChatCompletionResponse", completion);
    const message = completion.choices[0]!.message as unknown as ReasoningMessage;
    assert.match(message.reasoning_content ?? "", /^The user asked something; .* Nothing here needs a tool or a source\.$/u);
    assert.equal(message.reasoning, message.reasoning_content);
    assert.match(message.content ?? "", /^I thought about "Ship it\?"/u);
    assert.ok(!message.content!.includes("restate"));
    assert.ok((completion.usage?.completion_tokens_details?.reasoning_tokens ?? 0) > 0, "reasoning tokens reported");
  });

  test("streamed through the openai SDK: reasoning deltas first, then the answer, the same as complete", async () => {
    const complete = await client.chat.completions.create({ model: "think", messages: [{ role: "user", content: "Ship it?" }] });
    const stream = await client.chat.completions.create({
      model: "think",
      messages: [{ role: "user", content: "Ship it?" }],
      stream: true,
    });
    let reasoning = "";
    let content = "";
    const order: string[] = [];
    for await (const chunk of stream) {
      assertMatchesOpenAI("CreateChatCompletionStreamResponse", chunk);
      const delta = (chunk.choices[0]?.delta ?? {}) as ReasoningMessage;
      if (delta.reasoning_content) {
        assert.equal(delta.reasoning, delta.reasoning_content, "both names in every delta");
        reasoning += delta.reasoning_content;
        if (order.at(-1) !== "reasoning") order.push("reasoning");
      }
      if (delta.content) {
        content += delta.content;
        if (order.at(-1) !== "content") order.push("content");
      }
    }
    assert.deepEqual(order, ["reasoning", "content"]);
    const message = complete.choices[0]!.message as unknown as ReasoningMessage;
    assert.equal(reasoning, message.reasoning_content);
    assert.equal(content, message.content);
  });

  test("the reasoning effort sets how long the think demo reasons; none skips it", async () => {
    const high = await client.chat.completions.create({
      model: "think",
      messages: [{ role: "user", content: "x" }],
      reasoning_effort: "high",
    });
    assert.equal(((high.choices[0]!.message as unknown as ReasoningMessage).reasoning_content ?? "").split(". ").length, 4);
    const none = await client.chat.completions.create({
      model: "think",
      messages: [{ role: "user", content: "x" }],
      reasoning_effort: "none",
    });
    assert.equal((none.choices[0]!.message as unknown as ReasoningMessage).reasoning_content, undefined);
  });

  test("a real ChatOpenAI's reasoning_content (DeepSeek, vLLM) comes through, streamed and complete", async () => {
    const complete = await client.chat.completions.create({ model: "deepseek", messages: [{ role: "user", content: "hi" }] });
    const message = complete.choices[0]!.message as unknown as ReasoningMessage;
    assert.deepEqual([message.reasoning_content, message.content], ["Let me think.", "Done thinking."]);
    const response = await fetch(`${server.baseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "deepseek", stream: true, messages: [{ role: "user", content: "hi" }] }),
    });
    const frames = parseSse(await response.text()) as { choices?: { delta: ReasoningMessage }[] }[];
    const reasoning = frames.map((frame) => frame.choices?.[0]?.delta.reasoning_content ?? "").join("");
    assert.equal(reasoning, "Let me think.");
  });

  test("the AI SDK's OpenAI-compatible provider surfaces it as reasoning", async () => {
    const provider = createOpenAICompatible({ name: "chat-serve", baseURL: server.baseURL });
    const generated = await generateText({ model: provider("think"), prompt: "Ship it?" });
    assert.match(generated.reasoningText ?? "", /^The user asked something/u);
    assert.match(generated.text, /^I thought about/u);
    const streamed = streamText({ model: provider("think"), prompt: "Ship it?" });
    let reasoning = "";
    for await (const part of streamed.fullStream) if (part.type === "reasoning-delta") reasoning += part.text;
    assert.equal(reasoning, generated.reasoningText);
  });
});

describe("Responses", () => {
  test("complete: a reasoning item before the message; raw reasoning as reasoning_text, a summary as summary_text", async () => {
    const raw = await client.responses.create({ model: "think", input: "Ship it?" });
    assertMatchesResponses("Response", raw);
    assert.deepEqual(
      raw.output.map((item) => item.type),
      ["reasoning", "message"],
    );
    const rawItem = raw.output[0] as { summary: unknown[]; content?: { type: string; text: string }[]; status: string };
    assert.deepEqual(rawItem.summary, []);
    assert.equal(rawItem.content?.[0]?.type, "reasoning_text");
    assert.match(rawItem.content?.[0]?.text ?? "", /^The user asked something/u);
    assert.equal(rawItem.status, "completed");
    assert.ok(!raw.output_text.includes("restate"), "the answer text holds no reasoning");
    const summary = await client.responses.create({ model: "summary", input: "Plan?" });
    assertMatchesResponses("Response", summary);
    const summaryItem = summary.output[0] as { type: string; summary: { type: string; text: string }[]; content?: unknown };
    assert.equal(summaryItem.type, "reasoning");
    assert.deepEqual(summaryItem.summary, [{ type: "summary_text", text: THOUGHT }]);
    assert.equal(summaryItem.content, undefined);
    assert.equal(summary.output_text, ANSWER);
  });

  test("a client that asks for summaries (Codex: reasoning.summary) gets reasoning shown whole as its summary", async () => {
    for (const stream of [false, true]) {
      const body = { model: "think", input: "Ship it?", reasoning: { effort: "medium", summary: "auto" }, stream };
      const response = await fetch(`${server.baseURL}/responses`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      const done = stream
        ? (JSON.parse((await response.text()).trim().split("\n").at(-1)!.slice("data: ".length)) as { response: OpenAI.Responses.Response })
            .response
        : ((await response.json()) as OpenAI.Responses.Response);
      const item = done.output[0] as { type: string; summary: { type: string; text: string }[]; content?: unknown };
      assert.equal(item.type, "reasoning");
      assert.match(item.summary[0]?.text ?? "", /^The user asked something/u);
      assert.equal(item.content, undefined, "shown once, as the summary");
    }
  });

  test("streamed summary: the SDK sees the reasoning item and its summary events in order", async () => {
    const stream = client.responses.stream({ model: "summary", input: "Plan?" });
    const types: string[] = [];
    let summary = "";
    for await (const event of stream) {
      assertMatchesResponses("ResponseStreamEvent", event);
      types.push(event.type);
      if (event.type === "response.reasoning_summary_text.delta") summary += event.delta;
    }
    const final = await stream.finalResponse();
    assert.equal(summary, THOUGHT);
    const compact = types.filter((type, index) => type !== types[index - 1]);
    assert.deepEqual(compact.slice(0, 9), [
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.reasoning_summary_part.added",
      "response.reasoning_summary_text.delta",
      "response.reasoning_summary_text.done",
      "response.reasoning_summary_part.done",
      "response.output_item.done",
      "response.output_item.added",
    ]);
    assert.equal(final.output[0]!.type, "reasoning");
    assert.equal(final.output_text, ANSWER);
  });

  test("streamed raw reasoning: a reasoning_text part with Open Responses' reasoning events", async () => {
    const response = await fetch(`${server.baseURL}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "think", input: "Ship it?", stream: true }),
    });
    const events = (await response.text())
      .split("\n\n")
      .flatMap((frame) => /^data: (.+)$/mu.exec(frame)?.[1] ?? [])
      .map((data) => JSON.parse(data) as { type: string; delta?: string; part?: { type: string } });
    for (const event of events) assertMatchesResponses("ResponseStreamEvent", event);
    const types = events.map((event) => event.type).filter((type, index, all) => type !== all[index - 1]);
    assert.deepEqual(types.slice(2, 8), [
      "response.output_item.added",
      "response.content_part.added",
      "response.reasoning_text.delta",
      "response.reasoning_text.done",
      "response.content_part.done",
      "response.output_item.done",
    ]);
    assert.equal(events[3]?.part?.type, "reasoning_text");
    const text = events
      .filter((event) => event.type === "response.reasoning_text.delta")
      .map((event) => event.delta)
      .join("");
    assert.match(text, /^The user asked something/u);
  });
});

describe("reasoning: false", () => {
  test("keeps the model's reasoning from clients on both APIs, streamed and complete", async () => {
    const completion = await client.chat.completions.create({ model: "quiet", messages: [{ role: "user", content: "Ship it?" }] });
    assert.equal((completion.choices[0]!.message as unknown as ReasoningMessage).reasoning_content, undefined);
    assert.match(completion.choices[0]!.message.content ?? "", /^I thought about/u);
    const stream = await client.chat.completions.create({ model: "quiet", messages: [{ role: "user", content: "x" }], stream: true });
    for await (const chunk of stream) assert.equal((chunk.choices[0]?.delta as ReasoningMessage | undefined)?.reasoning_content, undefined);
    const response = await client.responses.create({ model: "quiet", input: "x" });
    assert.deepEqual(
      response.output.map((item) => item.type),
      ["message"],
    );
    const events = client.responses.stream({ model: "quiet", input: "x" });
    for await (const event of events) assert.ok(!event.type.includes("reasoning"), event.type);
  });
});

describe("the chat-ui profile", () => {
  const ui = (body: Record<string, unknown>) =>
    fetch(`${server.origin}/ui/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  test("reasoning is a <think> block before the answer, streamed and complete, as Open WebUI renders it", async () => {
    const complete = (await (await ui({ model: "summary", messages: [{ role: "user", content: "Plan?" }] })).json()) as {
      choices: { message: ReasoningMessage }[];
    };
    assert.equal(complete.choices[0]!.message.content, `<think>\n${THOUGHT}\n</think>\n\n${ANSWER}`);
    assert.equal(complete.choices[0]!.message.reasoning_content, undefined, "said once, in the text");
    const streamed = parseSse(await (await ui({ model: "summary", stream: true, messages: [{ role: "user", content: "Plan?" }] })).text());
    const text = (streamed as { choices?: { delta: ReasoningMessage }[] }[])
      .map((frame) => frame.choices?.[0]?.delta.content ?? "")
      .join("");
    assert.equal(text, complete.choices[0]!.message.content);
  });

  test("an earlier answer sent back with its <think> block reaches the graph without it", async () => {
    const response = await ui({
      model: "history",
      messages: [
        { role: "user", content: "Plan?" },
        { role: "assistant", content: `<think>\n${THOUGHT}\n</think>\n\n${ANSWER}` },
        { role: "user", content: "And then?" },
      ],
    });
    const body = (await response.json()) as { choices: { message: { content: string } }[] };
    assert.equal(body.choices[0]!.message.content, `saw: ${ANSWER}`);
  });
});
