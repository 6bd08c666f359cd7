import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { DefaultChatTransport, readUIMessageStream, type UIMessage } from "ai";
import { demoGraphs } from "../helpers/demo-graphs.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// The AI SDK UI message stream (`POST /v1/ai-sdk/{model}`), driven by `ai`'s own
// DefaultChatTransport (which parses and validates every chunk against the SDK's schema) and
// read into UI messages by `readUIMessageStream`, as useChat does.

let server: TestServer;

before(async () => {
  server = await startTestServer(demoGraphs(), { aiSdk: true });
});
after(() => server.close());

let counter = 0;
const userMessage = (text: string): UIMessage => {
  counter += 1;
  return { id: `u${counter}`, role: "user", parts: [{ type: "text", text }] };
};

/** One turn as useChat sends it: the answer as the UI message the page would show. */
async function turn(
  model: string,
  chatId: string,
  messages: UIMessage[],
  body?: Record<string, unknown>,
  trigger: "submit-message" | "regenerate-message" = "submit-message",
): Promise<UIMessage> {
  const transport = new DefaultChatTransport<UIMessage>({
    api: `${server.baseURL}/ai-sdk/${model}`,
    ...(body === undefined ? {} : { body }),
  });
  const stream = await transport.sendMessages({
    chatId,
    messages,
    trigger,
    messageId: undefined,
    abortSignal: undefined,
  });
  let last: UIMessage | undefined;
  for await (const message of readUIMessageStream<UIMessage>({ stream, onError: (error) => assert.fail(String(error)) })) last = message;
  assert.ok(last !== undefined, "the stream made a message");
  return last;
}

const textOf = (message: UIMessage) => message.parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("");

describe("the AI SDK UI message stream", () => {
  test("a streamed answer with the model and usage in its metadata, under the stream's header", async () => {
    const answer = await turn("echo", "chat-echo", [userMessage("hello useChat")]);
    assert.equal(answer.role, "assistant");
    assert.equal(textOf(answer), "hello useChat");
    const metadata = answer.metadata as { model: string; usage: { inputTokens: number; outputTokens: number } };
    assert.equal(metadata.model, "echo");
    assert.ok(metadata.usage.outputTokens > 0);
    const raw = await fetch(`${server.baseURL}/ai-sdk/echo`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ id: "raw", messages: [userMessage("hi")], trigger: "submit-message" }),
    });
    assert.equal(raw.headers.get("x-vercel-ai-ui-message-stream"), "v1");
    assert.match(await raw.text(), /data: \[DONE\]\n\n$/u);
  });

  test("the chat id is the session: a second turn remembers the first", async () => {
    const first = userMessage("my name is Ada");
    const answered = await turn("memory", "chat-memory", [first]);
    const question = userMessage("what is my name?");
    const second = await turn("memory", "chat-memory", [first, answered, question]);
    assert.match(textOf(second), /Ada/u);
    // A regenerate sends the history without the answer it replaces: the thread forks there.
    const again = await turn("memory", "chat-memory", [first, answered, question], undefined, "regenerate-message");
    assert.equal(textOf(again), textOf(second));
  });

  test("reasoning, client events as data parts, and citations as source parts", async () => {
    const thought = await turn("think", "chat-think", [userMessage("why is the sky blue?")]);
    assert.ok(thought.parts.some((part) => part.type === "reasoning" && part.text.length > 0));
    assert.ok(textOf(thought).length > 0);
    const researched = await turn("research", "chat-research", [userMessage("tides")], { settings: { depth: 2 } });
    const types = researched.parts.map((part) => part.type);
    assert.ok(types.includes("data-status"), `parts: ${types.join(", ")}`);
    assert.ok(types.includes("data-progress"));
    assert.ok(types.includes("source-url"));
    // Status keeps one part per namespace: the newest.
    const statuses = researched.parts.filter((part) => part.type === "data-status");
    assert.equal(statuses.length, 1);
    assert.match(JSON.stringify(statuses[0]), /Research complete/u);
  });

  test("a client tool round-trips as a tool part; a graph's pause is a graph_interrupt part answered with its output", async () => {
    const ask = userMessage("weather in Paris?");
    const called = await turn("tools", "chat-tools", [ask]);
    const call = called.parts.find((part) => part.type === "tool-get_weather") as { toolCallId: string; state: string; input: unknown };
    assert.equal(call.state, "input-available");
    assert.deepEqual(call.input, { city: "Paris" });
    const answered: UIMessage = {
      ...called,
      parts: called.parts.map((part) =>
        part.type === "tool-get_weather" ? { ...part, state: "output-available", output: { temperature: 21, sky: "clear" } } : part,
      ) as UIMessage["parts"],
    };
    const final = await turn("tools", "chat-tools", [ask, answered]);
    assert.match(textOf(final), /21/u);
    // The continuation goes on the same assistant message: the page shows it once.
    assert.equal(final.id, called.id);

    const deploy = userMessage("deploy the site");
    const paused = await turn("approval", "chat-approval", [deploy]);
    const pause = paused.parts.find((part) => part.type === "tool-graph_interrupt") as {
      toolCallId: string;
      state: string;
      input: { payload: { question: string } };
    };
    assert.equal(pause.state, "input-available");
    assert.match(pause.input.payload.question, /deploy the site/u);
    const approved: UIMessage = {
      ...paused,
      parts: paused.parts.map((part) =>
        part.type === "tool-graph_interrupt" ? { ...part, state: "output-available", output: "approve" } : part,
      ) as UIMessage["parts"],
    };
    const resumed = await turn("approval", "chat-approval", [deploy, approved]);
    assert.match(textOf(resumed), /^Approved: going ahead with deploy the site/u);
    assert.equal(resumed.id, paused.id);
  });
});

describe("the AI SDK UI message stream: bad input", () => {
  const post = (model: string, body: unknown) =>
    fetch(`${server.baseURL}/ai-sdk/${model}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  test("each mistake is a JSON error before any stream byte, naming the field", async () => {
    const unknown = await post("nobody", { id: "x", messages: [userMessage("hi")] });
    assert.equal(unknown.status, 404);
    assert.equal(((await unknown.json()) as { error: { code: string } }).error.code, "model_not_found");
    const noMessages = await post("echo", { id: "x" });
    assert.equal(noMessages.status, 400);
    assert.match(((await noMessages.json()) as { error: { message: string } }).error.message, /^messages: /u);
    const noCallId = await post("echo", {
      id: "x",
      messages: [
        userMessage("hi"),
        { id: "a", role: "assistant", parts: [{ type: "tool-get_weather", state: "output-available", output: 1 }] },
      ],
    });
    assert.equal(noCallId.status, 400);
    const body = (await noCallId.json()) as { error: { message: string; param: string } };
    assert.equal(body.error.param, "messages.1.parts.0.toolCallId");
    assert.match(body.error.message, /a tool part needs its toolCallId/u);
    const noSuchPause = await post("approval", {
      id: "x",
      messages: [
        userMessage("deploy"),
        {
          id: "a",
          role: "assistant",
          parts: [
            {
              type: "tool-graph_interrupt",
              toolCallId: "call_nope",
              state: "output-available",
              input: { run_id: "0190c0de-0000-7000-8000-000000000000", state_token: "x", payload: {} },
              output: "approve",
            },
          ],
        },
      ],
    });
    assert.ok([400, 409].includes(noSuchPause.status), `status ${noSuchPause.status}`);
    assert.equal(typeof ((await noSuchPause.json()) as { error: { message: string } }).error.message, "string");
  });

  test("a client that leaves mid-stream cancels the run", async () => {
    const controller = new AbortController();
    const transport = new DefaultChatTransport<UIMessage>({ api: `${server.baseURL}/ai-sdk/research` });
    const stream = await transport.sendMessages({
      chatId: "leaving",
      messages: [userMessage("a long one")],
      trigger: "submit-message",
      messageId: undefined,
      abortSignal: controller.signal,
    });
    const reader = stream.getReader();
    await reader.read();
    controller.abort();
    await reader.cancel().catch(() => {});
    const deadline = Date.now() + 5_000;
    while (server.serve.activeRuns > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(server.serve.activeRuns, 0, "no run is left in flight");
  });
});
