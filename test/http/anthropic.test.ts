import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import { demoGraphs } from "../helpers/demo-graphs.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// The Anthropic Messages API (`POST /v1/messages`), driven by `@anthropic-ai/sdk`, the client
// Claude Code is built on: its stream helper accumulates every event into the final message,
// and its errors are classes chosen by status and error type.

const KEY = "sk-anthropic-test";
let server: TestServer;
let client: Anthropic;

before(async () => {
  server = await startTestServer(demoGraphs(), { anthropic: true, auth: { keys: [{ key: KEY, tenant: "acme" }] } });
  client = new Anthropic({ apiKey: KEY, baseURL: server.origin, maxRetries: 0 });
});
after(() => server.close());

const say = (text: string) => [{ role: "user" as const, content: text }];
const textOf = (message: Anthropic.Message) => message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("");

/** The raw stream: each SSE frame's event name and data. */
async function rawEvents(body: Record<string, unknown>): Promise<{ event: string; data: Record<string, unknown> }[]> {
  const response = await fetch(`${server.baseURL}/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": KEY, "anthropic-version": "2023-06-01" },
    body: JSON.stringify({ max_tokens: 256, stream: true, ...body }),
  });
  assert.equal(response.status, 200);
  const text = await response.text();
  return text
    .split("\n\n")
    .filter((frame) => frame.startsWith("event: "))
    .map((frame) => {
      const [eventLine, dataLine] = frame.split("\n");
      return { event: eventLine!.slice("event: ".length), data: JSON.parse(dataLine!.slice("data: ".length)) };
    });
}

const WEATHER_TOOL = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: { type: "object" as const, properties: { city: { type: "string" } }, required: ["city"] },
};

describe("the Anthropic Messages API", () => {
  test("a complete message: text, end_turn, usage, Anthropic's ids", async () => {
    const message = await client.messages.create({ model: "echo", max_tokens: 256, messages: say("hello claude") });
    assert.match(message.id, /^msg_/u);
    assert.equal(message.type, "message");
    assert.equal(message.role, "assistant");
    assert.equal(message.model, "echo");
    assert.equal(textOf(message), "hello claude");
    assert.equal(message.stop_reason, "end_turn");
    assert.ok(message.usage.input_tokens > 0 && message.usage.output_tokens > 0);
  });

  test("a stream in Anthropic's event order, accumulated by the SDK's finalMessage()", async () => {
    const stream = client.messages.stream({ model: "echo", max_tokens: 256, messages: say("one two three") });
    const deltas: string[] = [];
    stream.on("text", (delta) => deltas.push(delta));
    const message = await stream.finalMessage();
    assert.equal(textOf(message), "one two three");
    assert.ok(deltas.length > 1, "the text came in pieces");
    assert.equal(message.stop_reason, "end_turn");
    assert.ok(message.usage.output_tokens > 0 && message.usage.input_tokens > 0);
    const events = (await rawEvents({ model: "echo", messages: say("a b") })).map((frame) => frame.event);
    assert.deepEqual(events.slice(0, 3), ["message_start", "ping", "content_block_start"]);
    assert.deepEqual(events.slice(-3), ["content_block_stop", "message_delta", "message_stop"]);
    assert.ok(events.includes("content_block_delta"));
  });

  test("max_tokens reaches the graph and a cut answer stops with max_tokens", async () => {
    const message = await client.messages.create({ model: "echo", max_tokens: 2, messages: say("one two three four five") });
    assert.equal(message.stop_reason, "max_tokens");
    assert.ok(textOf(message).length < "one two three four five".length);
  });

  test("a stop sequence that ends the answer is named, complete and streamed", async () => {
    const body = { model: "echo", max_tokens: 64, stop_sequences: ["zz", "three"], messages: say("one two three four") };
    const message = await client.messages.create(body);
    assert.equal(message.stop_reason, "stop_sequence");
    assert.equal(message.stop_sequence, "three");
    assert.equal(textOf(message).trim(), "one two");
    const streamed = await client.messages.stream(body).finalMessage();
    assert.equal(streamed.stop_reason, "stop_sequence");
    assert.equal(streamed.stop_sequence, "three");
    const unmet = await client.messages.create({ ...body, stop_sequences: ["zz"] });
    assert.equal(unmet.stop_reason, "end_turn");
    assert.equal(unmet.stop_sequence, null);
  });

  test("tools: a tool_use block (streamed as input_json_delta), and its tool_result answered", async () => {
    const stream = client.messages.stream({ model: "tools", max_tokens: 256, tools: [WEATHER_TOOL], messages: say("Weather in Oslo?") });
    const first = await stream.finalMessage();
    assert.equal(first.stop_reason, "tool_use");
    const use = first.content.find((block) => block.type === "tool_use");
    assert.ok(use !== undefined && use.type === "tool_use");
    assert.equal(use.name, "get_weather");
    assert.deepEqual(use.input, { city: "Oslo" });
    const second = await client.messages.create({
      model: "tools",
      max_tokens: 256,
      tools: [WEATHER_TOOL],
      messages: [
        ...say("Weather in Oslo?"),
        { role: "assistant", content: first.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: "12 degrees and clear" }] },
      ],
    });
    assert.equal(second.stop_reason, "end_turn");
    assert.equal(textOf(second), "The weather tool says: 12 degrees and clear");
  });

  test("thinking: the graph's reasoning as a signed thinking block before the text; none when disabled", async () => {
    const message = await client.messages
      .stream({ model: "think", max_tokens: 2048, thinking: { type: "enabled", budget_tokens: 20_000 }, messages: say("Can it?") })
      .finalMessage();
    const [thinking, text] = message.content;
    assert.equal(thinking?.type, "thinking");
    assert.ok(thinking?.type === "thinking" && thinking.thinking.split(". ").length >= 4 && thinking.signature.length > 0);
    assert.equal(text?.type, "text");
    assert.match(textOf(message), /my answer is: yes/u);
    const plain = await client.messages.create({
      model: "think",
      max_tokens: 256,
      thinking: { type: "disabled" },
      messages: say("Can it?"),
    });
    assert.deepEqual(
      plain.content.map((block) => block.type),
      ["text"],
    );
  });

  test("an interrupt is a graph_interrupt tool_use; a tool_result answers it and the run resumes", async () => {
    const asked = await client.messages.create({ model: "approval", max_tokens: 256, messages: say("delete the cache") });
    assert.equal(asked.stop_reason, "tool_use");
    const call = asked.content.find((block) => block.type === "tool_use");
    assert.ok(call?.type === "tool_use" && call.name === "graph_interrupt");
    assert.match(JSON.stringify(call.input), /May I go ahead with: delete the cache/u);
    const answered = await client.messages.create({
      model: "approval",
      max_tokens: 256,
      messages: [
        ...say("delete the cache"),
        { role: "assistant", content: asked.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "yes" }] },
      ],
    });
    assert.equal(textOf(answered), "Approved: going ahead with delete the cache.");
  });

  test("count_tokens counts the input without running the graph, more for a longer one", async () => {
    const short = await client.messages.countTokens({ model: "echo", messages: say("hi") });
    const long = await client.messages.countTokens({
      model: "echo",
      system: "You are a careful assistant.",
      tools: [WEATHER_TOOL],
      messages: say("hi there, how is the weather in Oslo today?"),
    });
    assert.ok(short.input_tokens > 0);
    assert.ok(long.input_tokens > short.input_tokens + 10);
    await assert.rejects(client.messages.countTokens({ model: "nope", messages: say("hi") }), Anthropic.NotFoundError);
  });

  test("a Claude-Code-shaped request (cached system blocks, many tools, metadata) streams normally", async () => {
    const tools = Array.from({ length: 40 }, (_, index) => ({
      name: index === 0 ? "mcp__files__read_file" : `Tool${index}`,
      description: `Tool number ${index}. `.repeat(20),
      input_schema: { type: "object" as const, properties: { path: { type: "string" } } },
      ...(index === 39 ? { cache_control: { type: "ephemeral" as const } } : {}),
    }));
    const message = await client.messages
      .stream({
        model: "echo",
        max_tokens: 32_000,
        system: [
          { type: "text", text: "You are Claude Code, Anthropic's official CLI for Claude." },
          { type: "text", text: "Long instructions. ".repeat(500), cache_control: { type: "ephemeral" } },
        ],
        tools,
        metadata: { user_id: "user_abc_account__session_123" },
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "<system-reminder>context</system-reminder>" },
              { type: "text", text: "fix the bug", cache_control: { type: "ephemeral" } },
            ],
          },
        ],
        temperature: 1,
      })
      .finalMessage();
    assert.match(textOf(message), /fix the bug/u);
    assert.equal(message.stop_reason, "end_turn");
  });

  test("client events as graph_event frames when asked, citations on the text block", async () => {
    const frames = await rawEvents({ model: "research", messages: say("What is LangGraph?"), metadata: { graph_stream_events: "v1" } });
    assert.ok(frames.some((frame) => frame.event === "graph_event" && (frame.data.event as { type: string }).type === "status"));
    const message = await client.messages
      .stream({ model: "research", max_tokens: 256, messages: say("What is LangGraph?") })
      .finalMessage();
    const text = message.content.find((block) => block.type === "text");
    assert.ok(text?.type === "text" && (text.citations?.length ?? 0) > 0);
    assert.equal(text.citations?.[0]?.type, "web_search_result_location");
    assert.equal(
      frames.filter((frame) => frame.event === "graph_event").length > 0 &&
        (await rawEvents({ model: "research", messages: say("What is LangGraph?") })).some((frame) => frame.event === "graph_event"),
      false,
      "no graph_event frames unless asked",
    );
  });

  test("metadata.session_id continues a stateful graph's thread from the history it is sent", async () => {
    const metadata = { session_id: `claude-${Date.now()}` } as never;
    const first = await client.messages.create({ model: "memory", max_tokens: 256, metadata, messages: say("my name is Ada") });
    const second = await client.messages.create({
      model: "memory",
      max_tokens: 256,
      metadata,
      messages: [...say("my name is Ada"), { role: "assistant", content: first.content }, ...say("what is my name?")],
    });
    assert.equal(textOf(second), 'You said "what is my name?". Before that you said: "my name is Ada".');
  });
});

describe("Anthropic's errors", () => {
  const post = (body: unknown, headers: Record<string, string> = { "x-api-key": KEY }) =>
    fetch(`${server.baseURL}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });

  test("bad requests are invalid_request_error in Anthropic's shape, through the SDK's classes", async () => {
    const cases: [unknown, RegExp][] = [
      [{ model: "echo", messages: say("hi") }, /max_tokens: Field required/u],
      [
        { model: "echo", max_tokens: 10, messages: [{ role: "assistant", content: "hi" }, ...say("x")] },
        /first message must use the user role/u,
      ],
      [
        { model: "echo", max_tokens: 10, messages: [...say("hi"), { role: "assistant", content: "prefill" }] },
        /last message must use the user role/u,
      ],
      [{ model: "echo", max_tokens: 10, messages: [{ role: "tool", content: "hi" }] }, /role must be 'user', 'assistant' or 'system'/u],
      // A system turn is read (Claude Code sends one), but a conversation still starts with the user.
      [{ model: "echo", max_tokens: 10, messages: [{ role: "system", content: "hi" }] }, /first message must use the user role/u],
      [
        {
          model: "echo",
          max_tokens: 10,
          messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "x" }] }],
        },
        /unexpected tool_use_id found in tool_result blocks: toolu_1/u,
      ],
      [
        {
          model: "echo",
          max_tokens: 10,
          messages: [
            ...say("hi"),
            { role: "assistant", content: [{ type: "tool_use", id: "toolu_2", name: "x", input: {} }] },
            ...say("and?"),
          ],
        },
        /tool_use ids were found without tool_result blocks immediately after: toolu_2/u,
      ],
      [
        { model: "echo", max_tokens: 10, messages: [{ role: "user", content: [{ type: "video", url: "x" }] }] },
        /a video block is not taken here/u,
      ],
      [{ model: "echo", max_tokens: 10, messages: say("hi"), tools: [{ name: "t", input_schema: { type: "string" } }] }, /tools\.0/u],
      ["{not json", /not valid JSON/u],
    ];
    for (const [body, message] of cases) {
      const response = await post(body);
      const payload = (await response.json()) as { type: string; error: { type: string; message: string } };
      assert.equal(response.status, 400, JSON.stringify(payload));
      assert.equal(payload.type, "error");
      assert.equal(payload.error.type, "invalid_request_error");
      assert.match(payload.error.message, message);
    }
    await assert.rejects(client.messages.create({ model: "echo", messages: say("hi") } as never), Anthropic.BadRequestError);
  });

  test("an unknown model is not_found_error, a wrong key authentication_error, a wrong method 405 in the same shape", async () => {
    await assert.rejects(client.messages.create({ model: "claude-nope", max_tokens: 5, messages: say("hi") }), (error: unknown) => {
      assert.ok(error instanceof Anthropic.NotFoundError);
      assert.equal((error.error as { error: { type: string } }).error.type, "not_found_error");
      return true;
    });
    const stranger = new Anthropic({ apiKey: "wrong", baseURL: server.origin, maxRetries: 0 });
    await assert.rejects(stranger.messages.create({ model: "echo", max_tokens: 5, messages: say("hi") }), Anthropic.AuthenticationError);
    const wrongMethod = await fetch(`${server.baseURL}/messages`, { headers: { "x-api-key": KEY } });
    assert.equal(wrongMethod.status, 405);
    assert.equal(wrongMethod.headers.get("allow"), "POST");
    assert.deepEqual(((await wrongMethod.json()) as { error: { type: string } }).error.type, "invalid_request_error");
    // A path under /messages that does not exist is told so in the same shape.
    const unknown = await fetch(`${server.baseURL}/messages/batches`, { method: "POST", headers: { "x-api-key": KEY } });
    assert.equal(unknown.status, 404);
    assert.equal(((await unknown.json()) as { type: string; error: { type: string } }).error.type, "not_found_error");
    // The OpenAI routes beside it keep the OpenAI envelope.
    const openai = await fetch(`${server.baseURL}/chat/completions`, {
      method: "POST",
      headers: { "x-api-key": KEY, "content-type": "application/json" },
      body: "{}",
    });
    assert.equal(openai.status, 400);
    assert.ok("code" in ((await openai.json()) as { error: Record<string, unknown> }).error);
  });
});

test("with CORS on, a browser reaches /messages: its preflight and the answer carry the origin", async () => {
  const local = await startTestServer(demoGraphs(), { anthropic: true, cors: { origins: ["https://app.example"] } });
  try {
    const preflight = await fetch(`${local.baseURL}/messages`, {
      method: "OPTIONS",
      headers: {
        origin: "https://app.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type,x-api-key",
      },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get("access-control-allow-origin"), "https://app.example");
    const answer = await fetch(`${local.baseURL}/messages`, {
      method: "POST",
      headers: { origin: "https://app.example", "content-type": "application/json" },
      body: JSON.stringify({ model: "echo", max_tokens: 16, messages: say("from a page") }),
    });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get("access-control-allow-origin"), "https://app.example");
  } finally {
    await local.close();
  }
});
