import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { AIMessage } from "@langchain/core/messages";
import { END, interrupt, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import OpenAI from "openai";
import { InMemoryRunCoordinator } from "../../src/coordination/in-memory-run-coordinator.js";
import { GraphFeature } from "../../src/registry/features.js";
import type { HumanInterrupt, HumanResponse } from "../../src/runs/interrupts/agent-inbox.js";
import { connectMcp, resultText } from "../helpers/mcp.js";
import { answerBatch } from "../helpers/resume.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// An Agent Inbox interrupt (LangGraph's `HumanInterrupt[]`, as the Agent Inbox examples ask) is
// asked on MCP as a form of the answers it allows and the arguments to edit, and in words on the
// OpenAI surfaces; whatever the person answers there resumes the graph with the
// `HumanResponse[]` it reads.

const request: HumanInterrupt = {
  action_request: { action: "send_email", args: { to: "bob@example.com", subject: "Hi" } },
  config: { allow_accept: true, allow_edit: true, allow_respond: true, allow_ignore: true },
  description: "Send this email?",
};

const inbox = new StateGraph(MessagesAnnotation)
  .addNode("ask", () => {
    const [response] = interrupt<HumanInterrupt[], HumanResponse[]>([request]);
    if (response === undefined || typeof response.type !== "string") throw new Error("If response type is edit, args must be an object");
    const said =
      response.type === "accept"
        ? `sent to ${request.action_request.args.to}`
        : response.type === "edit"
          ? `sent to ${String((response.args as { args: Record<string, unknown> }).args.to)}`
          : response.type === "response"
            ? `noted: ${response.args as string}`
            : "skipped";
    return { messages: [new AIMessage(said)] };
  })
  .addEdge(START, "ask")
  .addEdge("ask", END)
  .compile();

let server: TestServer;
before(async () => {
  server = await startTestServer(
    {
      inbox: {
        graph: inbox,
        description: "Asks before it sends an email",
        features: [GraphFeature.INTERRUPTS],
        runCoordinator: new InMemoryRunCoordinator(),
      },
    },
    { mcp: true },
  );
});
after(() => server.close());

test("MCP: the form offers what the request allows and its arguments; an edit resumes with the edited arguments", async () => {
  const { client, asked, close } = await connectMcp(`${server.baseURL}/mcp`, {
    elicit: () => ({ action: "accept", content: { response_type: "edit", args_to: "carol@example.com", args_subject: "" } }),
  });
  try {
    const result = await client.callTool({ name: "inbox", arguments: { message: "email bob" } });
    assert.equal(resultText(result), "sent to carol@example.com");
    const schema = asked[0]?.requestedSchema as { properties: Record<string, { enum?: string[] }>; required: string[] };
    assert.deepEqual(schema.properties.response_type?.enum, ["accept", "edit", "respond", "ignore"]);
    assert.deepEqual(Object.keys(schema.properties), ["response_type", "response", "args_to", "args_subject"]);
    assert.deepEqual(schema.required, ["response_type"]);
    assert.match(asked[0]?.message ?? "", /Send this email\?/u);
  } finally {
    await close();
  }
});

test("chat completions: the question in words; 'accept', a response in words, and a refused answer", async () => {
  const openai = new OpenAI({ baseURL: server.baseURL, apiKey: "x", maxRetries: 0 });
  const history: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: "user", content: "email bob" }];
  const ask = async () => {
    const paused = await openai.chat.completions.create({ model: "inbox", messages: history });
    const calls = paused.choices[0]!.message.tool_calls!;
    assert.equal(paused.choices[0]?.finish_reason, "tool_calls");
    return calls;
  };
  const calls = await ask();
  const accepted = await openai.chat.completions.create({ model: "inbox", messages: answerBatch(history, calls, "accept") });
  assert.equal(accepted.choices[0]?.message.content, "sent to bob@example.com");
  const again = await ask();
  const responded = await openai.chat.completions.create({ model: "inbox", messages: answerBatch(history, again, "Ask Bob first") });
  assert.equal(responded.choices[0]?.message.content, "noted: Ask Bob first");
  const third = await ask();
  const edited = await openai.chat.completions.create({
    model: "inbox",
    messages: answerBatch(history, third, JSON.stringify({ resume: { to: "dave@example.com" } })),
  });
  assert.equal(edited.choices[0]?.message.content, "sent to dave@example.com");
});
