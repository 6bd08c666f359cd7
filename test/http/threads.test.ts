import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { END, interrupt, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { ChatOpenAI } from "@langchain/openai";
import { Agent, OpenAIResponsesModel, run, setTracingDisabled } from "@openai/agents";
import OpenAI from "openai";
import { z } from "zod";
import { InMemoryRunCoordinator } from "../../src/coordination/in-memory-run-coordinator.js";
import { ScriptedChatModel } from "../../src/testing/scripted-chat-model.js";
import { assertMatchesOpenAI, assertMatchesResponses } from "../helpers/openai-schema.js";
import { recallGraph, said } from "../helpers/recall-graphs.js";
import { answerBatch } from "../helpers/resume.js";
import { parseSse, startTestServer, type TestServer } from "../helpers/server.js";

// The LangGraph tutorial shapes, unchanged: a graph compiled with a checkpointer keeps the
// conversation on a thread, and each turn gives it only what is new. The scripted model says
// every user message its state holds, so a test sees exactly what the thread remembers: a
// message sent twice (a server that replayed the history into the thread) shows twice.

const tutorialSaver = new MemorySaver();

const tutorialGraph = () => recallGraph(tutorialSaver);

function reactAgent() {
  const getTime = tool(async () => "12:00", { name: "get_time", description: "The time now", schema: z.object({}) });
  const model = new ScriptedChatModel({
    respond: (messages) => {
      const last = messages.at(-1);
      if (last?.type === "human" && last.text.includes("time")) return { text: "", toolCalls: [{ name: "get_time", args: {} }] };
      return `${last?.type === "tool" ? `It is ${last.text}. ` : ""}I remember: ${said(messages)}`;
    },
  });
  return createReactAgent({ llm: model, tools: [getTime], checkpointSaver: new MemorySaver() });
}

/** A graph without a checkpointer of its own, made stateful by `threads: true`. */
const plainGraph = () => recallGraph();

/** A stateful graph that says how many system messages its thread holds. */
function systemCountingGraph() {
  const model = new ScriptedChatModel({
    respond: (messages) => `${messages.filter((message) => message.type === "system").length} system; I remember: ${said(messages)}`,
  });
  return new StateGraph(MessagesAnnotation)
    .addNode("chatbot", async (state, config) => ({ messages: [await model.invoke(state.messages, config)] }))
    .addEdge(START, "chatbot")
    .addEdge("chatbot", END)
    .compile({ checkpointer: new MemorySaver() });
}

/** A stateful graph with INTERRUPTS: a message starting "confirm" asks before it answers. */
const askingSaver = new MemorySaver();
function askingGraph() {
  const model = new ScriptedChatModel({ respond: (messages) => `I remember: ${said(messages)}` });
  return new StateGraph(MessagesAnnotation)
    .addNode("chatbot", async (state, config) => {
      const last = state.messages.at(-1);
      const answer = last?.type === "human" && last.text.startsWith("confirm") ? interrupt({ question: "Sure?" }) : undefined;
      const reply = await model.invoke(state.messages, config);
      return {
        messages: [answer === undefined ? reply : { role: "assistant", content: `${reply.text} (you answered ${String(answer)})` }],
      };
    })
    .addEdge(START, "chatbot")
    .addEdge("chatbot", END)
    .compile({ checkpointer: askingSaver });
}

let server: TestServer;
let client: OpenAI;
before(async () => {
  server = await startTestServer(
    {
      tutorial: { graph: tutorialGraph(), description: "A tutorial chatbot", streamableNodeNames: ["chatbot"] },
      agent: { graph: reactAgent(), description: "A prebuilt ReAct agent", streamableNodeNames: ["agent"] },
      threaded: { graph: plainGraph(), description: "threads: true", streamableNodeNames: ["chatbot"], threads: true },
      systems: { graph: systemCountingGraph(), description: "counts system messages" },
      asking: { graph: askingGraph(), description: "asks first", features: ["INTERRUPTS"], runCoordinator: new InMemoryRunCoordinator() },
    },
    { profiles: { "chat-ui": { prefix: "/ui/v1" } } },
  );
  client = new OpenAI({ baseURL: server.baseURL, apiKey: "x", maxRetries: 0 });
});
after(() => server.close());

type Chat = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/** One chat turn: the whole history plus the new message, as chat clients send it. */
async function chatTurn(model: string, session: string, history: Chat[], content: string, stream = false): Promise<Chat[]> {
  const messages: Chat[] = [...history, { role: "user", content }];
  let answer: string;
  if (stream) {
    const chunks = await client.chat.completions.create({ model, messages, metadata: { session_id: session }, stream: true });
    answer = "";
    for await (const chunk of chunks) answer += chunk.choices[0]?.delta.content ?? "";
  } else {
    const completion = await client.chat.completions.create({ model, messages, metadata: { session_id: session } });
    assertMatchesOpenAI("CreateChatCompletionResponse", completion);
    answer = completion.choices[0]!.message.content ?? "";
  }
  return [...messages, { role: "assistant", content: answer }];
}

const lastText = (history: Chat[]) => String(history.at(-1)!.content);

for (const model of ["tutorial", "agent", "threaded"]) {
  describe(`${model}: a three-turn conversation`, () => {
    test("Responses: previous_response_id continues the thread; the client sends only the new turn", async () => {
      const first = await client.responses.create({ model, input: "my name is Ada" });
      assertMatchesResponses("Response", first);
      assert.equal(first.output_text, "I remember: my name is Ada");
      const second = await client.responses.create({ model, previous_response_id: first.id, input: "I like tea" });
      const third = await client.responses.stream({ model, previous_response_id: second.id, input: "what is my name?" }).finalResponse();
      assert.equal(third.output_text, "I remember: my name is Ada | I like tea | what is my name?");
      assert.equal(third.previous_response_id, second.id);
    });

    test("Responses: a conversation is the thread", async () => {
      const conversation = await client.conversations.create({});
      for (const input of ["one", "two"]) await client.responses.create({ model, conversation: conversation.id, input });
      const third = await client.responses.create({ model, conversation: conversation.id, input: "three" });
      assert.equal(third.output_text, "I remember: one | two | three");
      assert.deepEqual(third.conversation, { id: conversation.id });
      const items = await client.conversations.items.list(conversation.id, { order: "asc" });
      const texts = items.data.map((item) =>
        item.type === "message" ? item.content.map((part) => ("text" in part ? part.text : "")).join("") : item.type,
      );
      assert.deepEqual(
        texts.filter((text) => !text.startsWith("I remember") && text !== "function_call" && text !== "function_call_output"),
        ["one", "two", "three"],
      );
    });

    test("chat completions: metadata.session_id names the thread; the whole history is sent, only the new turn reaches the graph", async () => {
      const session = `s-${model}-${Math.random()}`;
      let history = await chatTurn(model, session, [], "my name is Ada");
      history = await chatTurn(model, session, history, "I like tea", true);
      history = await chatTurn(model, session, history, "what is my name?");
      assert.equal(lastText(history), "I remember: my name is Ada | I like tea | what is my name?");
    });
  });
}

describe("regenerate and edit fork the thread", () => {
  test("chat: a regenerated answer and an edited message branch; the abandoned branch never comes back", async () => {
    const session = `fork-${Math.random()}`;
    let history = await chatTurn("tutorial", session, [], "a");
    history = await chatTurn("tutorial", session, history, "b");
    // Regenerate: the same history without the last answer.
    const regenerated = await chatTurn("tutorial", session, history.slice(0, -2), "b");
    assert.equal(lastText(regenerated), "I remember: a | b", "the regenerate runs from before 'b' was answered");
    // Edit: the second message changed.
    const edited = await chatTurn("tutorial", session, history.slice(0, 2), "B!");
    assert.equal(lastText(edited), "I remember: a | B!");
    const next = await chatTurn("tutorial", session, edited, "c");
    assert.equal(lastText(next), "I remember: a | B! | c", "the abandoned 'b' never reaches a later turn");
    // Editing the very first message starts over.
    const restarted = await chatTurn("tutorial", session, [], "z");
    assert.equal(lastText(restarted), "I remember: z");
  });

  test("Responses: continuing an older response branches there", async () => {
    const first = await client.responses.create({ model: "tutorial", input: "a" });
    await client.responses.create({ model: "tutorial", previous_response_id: first.id, input: "b" });
    const branch = await client.responses.create({ model: "tutorial", previous_response_id: first.id, input: "B!" });
    assert.equal(branch.output_text, "I remember: a | B!");
    const next = await client.responses.create({ model: "tutorial", previous_response_id: branch.id, input: "c" });
    assert.equal(next.output_text, "I remember: a | B! | c");
  });
});

describe("more clients", () => {
  test("LangChain's ChatOpenAI on the Responses API continues a thread with previous_response_id", async () => {
    const model = new ChatOpenAI({
      model: "tutorial",
      useResponsesApi: true,
      apiKey: "not-checked",
      configuration: { baseURL: server.baseURL },
      maxRetries: 0,
    });
    const first = await model.invoke([new HumanMessage("my name is Ada")]);
    const id = first.response_metadata.id as string;
    assert.match(id, /^resp_/u);
    const second = await model.invoke([new HumanMessage("I like tea")], { previous_response_id: id });
    const third = await model.invoke([new HumanMessage("what is my name?")], {
      previous_response_id: second.response_metadata.id as string,
    });
    assert.equal(third.text, "I remember: my name is Ada | I like tea | what is my name?");
  });

  test("the OpenAI Agents SDK: a three-turn session by previousResponseId and by conversationId; its instructions, sent every turn, reach the thread once", async () => {
    setTracingDisabled(true);
    const agent = new Agent({ name: "assistant", instructions: "Be brief.", model: new OpenAIResponsesModel(client, "systems") });
    let previousResponseId: string | undefined;
    let output = "";
    for (const input of ["one", "two", "three"]) {
      const result = await run(agent, input, { previousResponseId });
      previousResponseId = result.lastResponseId;
      output = String(result.finalOutput);
    }
    assert.equal(output, "1 system; I remember: one | two | three");
    const { id: conversationId } = await client.conversations.create({});
    for (const input of ["a", "b", "c"]) output = String((await run(agent, input, { conversationId })).finalOutput);
    assert.equal(output, "1 system; I remember: a | b | c");
    // Instructions that change are given to the thread.
    const changed = new Agent({ name: "assistant", instructions: "Be verbose.", model: new OpenAIResponsesModel(client, "systems") });
    assert.equal(String((await run(changed, "d", { conversationId })).finalOutput), "2 system; I remember: a | b | c | d");
  });

  /** One Open WebUI turn: its streamed request shape, its chat id header, the whole history. */
  async function openWebUi(chatId: string, messages: Chat[]): Promise<string> {
    const response = await fetch(`${server.origin}/ui/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "X-OpenWebUI-Chat-Id": chatId },
      body: JSON.stringify({
        model: "tutorial",
        messages,
        stream: true,
        stream_options: { include_usage: true },
        chat_id: chatId,
        features: {},
      }),
    });
    assert.equal(response.status, 200);
    return (parseSse(await response.text()) as (string | { choices?: { delta?: { content?: string } }[] })[])
      .map((chunk) => (typeof chunk === "string" ? "" : (chunk.choices?.[0]?.delta?.content ?? "")))
      .join("");
  }

  test("Open WebUI in the chat-ui profile: its chat id names the thread; a regenerate and an edit branch it", async () => {
    const chatId = `owui-${Math.random()}`;
    const history: Chat[] = [{ role: "user", content: "a" }];
    history.push({ role: "assistant", content: await openWebUi(chatId, history) }, { role: "user", content: "b" });
    const second = await openWebUi(chatId, history);
    assert.equal(second, "I remember: a | b");
    // Regenerate: the same request again.
    assert.equal(await openWebUi(chatId, history), "I remember: a | b", "the regenerate does not see the answer it replaces");
    // Edit: 'b' becomes 'B'.
    const edited: Chat[] = [...history.slice(0, 2), { role: "user", content: "B" }];
    const answer = await openWebUi(chatId, edited);
    assert.equal(answer, "I remember: a | B");
    const next = await openWebUi(chatId, [...edited, { role: "assistant", content: answer }, { role: "user", content: "c" }]);
    assert.equal(next, "I remember: a | B | c");
  });
});

describe("interrupts on a thread", () => {
  test("Responses: a stateful graph pauses inside its thread, the resume continues it, and the next turn remembers both", async () => {
    const first = await client.responses.create({ model: "asking", input: "hello" });
    assert.equal(first.output_text, "I remember: hello");
    const paused = await client.responses.create({ model: "asking", previous_response_id: first.id, input: "confirm the order" });
    const call = paused.output.find((item) => item.type === "function_call");
    assert.equal(call?.type === "function_call" && call.name, "graph_interrupt");
    const resumed = await client.responses.create({
      model: "asking",
      previous_response_id: paused.id,
      input: [{ type: "function_call_output", call_id: (call as { call_id: string }).call_id, output: '{"resume": "yes"}' }],
    });
    assert.equal(resumed.output_text, "I remember: hello | confirm the order (you answered yes)");
    const next = await client.responses.create({ model: "asking", previous_response_id: resumed.id, input: "what did I say?" });
    assert.equal(next.output_text, "I remember: hello | confirm the order | what did I say?");
  });

  test("chat: a session's run pauses on its thread; the resume and the next turn go on from there", async () => {
    const session = `asking-${Math.random()}`;
    let history = await chatTurn("asking", session, [], "hello");
    history.push({ role: "user", content: "confirm it" });
    const paused = await client.chat.completions.create({ model: "asking", messages: history, metadata: { session_id: session } });
    const calls = paused.choices[0]!.message.tool_calls!;
    assert.equal(calls[0]!.type === "function" && calls[0]!.function.name, "graph_interrupt");
    const answered = answerBatch(history, calls, "no");
    const resumed = await client.chat.completions.create({ model: "asking", messages: answered, metadata: { session_id: session } });
    assert.equal(resumed.choices[0]!.message.content, "I remember: hello | confirm it (you answered no)");
    history = [...answered, { role: "assistant", content: resumed.choices[0]!.message.content }];
    const next = await chatTurn("asking", session, history, "and now?");
    assert.equal(lastText(next), "I remember: hello | confirm it | and now?");
  });
});

describe("a thread runs one turn at a time", () => {
  test("a second turn on a busy thread is 409 run_busy", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow = new StateGraph(MessagesAnnotation)
      .addNode("chatbot", async () => {
        await gate;
        return { messages: [{ role: "assistant", content: "done" }] };
      })
      .addEdge(START, "chatbot")
      .addEdge("chatbot", END)
      .compile({ checkpointer: new MemorySaver() });
    const busy = await startTestServer({ slow: { graph: slow, description: "slow" } });
    try {
      const slowClient = new OpenAI({ baseURL: busy.baseURL, apiKey: "x", maxRetries: 0 });
      const running = slowClient.chat.completions.create({
        model: "slow",
        messages: [{ role: "user", content: "hi" }],
        metadata: { session_id: "s" },
      });
      await new Promise((resolve) => setTimeout(resolve, 100));
      await assert.rejects(
        slowClient.chat.completions.create({ model: "slow", messages: [{ role: "user", content: "hi" }], metadata: { session_id: "s" } }),
        (error: InstanceType<typeof OpenAI.APIError>) => error.status === 409 && error.code === "run_busy",
      );
      release();
      const done = await running;
      assert.equal(done.choices[0]!.message.content, "done");
    } finally {
      release();
      await busy.close();
    }
  });
});
