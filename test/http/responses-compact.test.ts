import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import OpenAI from "openai";
import { demoGraphs } from "../helpers/demo-graphs.js";
import { assertMatchesOpenResponses, assertMatchesResponses } from "../helpers/openai-schema.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// `POST /v1/responses/compact` (Open Responses' compaction): a conversation's input compacted
// into a shorter one, and that output sent back as the input of the next response, as Codex
// does when its context grows long.

let server: TestServer;
let client: OpenAI;

before(async () => {
  server = await startTestServer(demoGraphs());
  client = new OpenAI({ apiKey: "unused", baseURL: server.baseURL });
});
after(() => server.close());

type Compacted = { id: string; object: string; output: Record<string, unknown>[]; usage: { input_tokens: number; output_tokens: number } };

async function compact(
  body: unknown,
): Promise<{ status: number; body: Compacted & { error?: { code: string; message: string; param: string | null } } }> {
  const response = await fetch(`${server.baseURL}/responses/compact`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as never };
}

const LONG_FILE = "export function add(a, b) {\n  return a + b;\n}\n".repeat(200);
const CONVERSATION = [
  { type: "message", role: "developer", content: "You are a coding agent." },
  { type: "message", role: "user", content: "Read add.js and tell me what it does." },
  { type: "function_call", call_id: "call_1", name: "read_file", arguments: JSON.stringify({ path: "add.js" }) },
  { type: "function_call_output", call_id: "call_1", output: LONG_FILE },
  { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "opaque" },
  { type: "message", role: "assistant", content: [{ type: "output_text", text: `It adds two numbers. ${"Details. ".repeat(300)}` }] },
  { type: "message", role: "user", content: "Now write a test for it." },
];

describe("POST /responses/compact", () => {
  test("keeps the conversation's own words, compacts the rest into one item; far fewer tokens", async () => {
    const { status, body } = await compact({ model: "echo", input: CONVERSATION, instructions: "Summarize the conversation." });
    assert.equal(status, 200, JSON.stringify(body));
    assertMatchesOpenResponses("CompactResource", body);
    assert.equal(body.object, "response.compaction");
    assert.deepEqual(
      body.output.map((item) => [item.type, item.role ?? null]),
      [
        ["message", "developer"],
        ["message", "user"],
        ["message", "user"],
        ["compaction", null],
      ],
    );
    assert.match(String(body.output[3]?.id), /^cmp_/u);
    assert.ok(body.usage.output_tokens * 4 < body.usage.input_tokens, `${body.usage.output_tokens} of ${body.usage.input_tokens}`);
  });

  test("the compacted output continues the conversation: the graph sees the summary", async () => {
    const { body } = await compact({ model: "echo", input: CONVERSATION });
    // Codex's next turn: the compacted items, then what is new, with what Codex sends besides.
    const next = await client.responses.create({
      model: "memory",
      input: [...body.output, { type: "message", role: "user", content: "Run the test." }] as never,
      include: ["reasoning.encrypted_content"],
      store: false,
    });
    assert.equal(next.status, "completed");
    assert.match(next.output_text, /You said "Run the test\."\. Before that you said: "Read add\.js/u);
    const tokens = await client.responses.inputTokens.count({
      model: "echo",
      input: [...body.output, { type: "message", role: "user", content: "Run the test." }] as never,
    });
    assert.ok(tokens.input_tokens < 1_000, `${tokens.input_tokens} input tokens after compaction`);
  });

  test("a stored conversation compacts through previous_response_id; compacting twice keeps the first summary", async () => {
    const first = await client.responses.create({ model: "echo", input: "first question" });
    const second = await client.responses.create({ model: "echo", input: "second question", previous_response_id: first.id });
    const { status, body } = await compact({ model: "echo", previous_response_id: second.id });
    assert.equal(status, 200);
    assert.deepEqual(
      body.output.filter((item) => item.type === "message").map((item) => (item.content as { text: string }[])[0]?.text),
      ["first question", "second question"],
    );
    const again = await compact({
      model: "echo",
      input: [...body.output, { type: "message", role: "assistant", content: "third answer" }],
    });
    const summary = again.body.output.filter((item) => item.type === "compaction");
    assert.equal(summary.length, 1, "one compaction item, holding the earlier one's summary");
  });

  test("mistakes are 400s and 404s in the OpenAI envelope", async () => {
    const cases: [unknown, number, RegExp][] = [
      [{ model: "echo" }, 400, /Give the conversation to compact/u],
      [{ model: "echo", input: [{ type: "compaction", encrypted_content: "forged" }] }, 400, /not made by this server/u],
      [{ model: "echo", input: "x", stream: true }, 400, /stream/u],
      [{ model: "nope", input: "x" }, 404, /nope/u],
      [{ model: "echo", previous_response_id: "resp_missing" }, 404, /resp_missing/u],
      [{ model: "echo", input: [{ type: "function_call_output", call_id: "call_9", output: "x" }] }, 400, /call_9/u],
    ];
    for (const [request, status, message] of cases) {
      const { status: got, body } = await compact(request);
      assert.equal(got, status, JSON.stringify(body));
      assert.match(body.error?.message ?? "", message);
    }
  });
});

describe("a compaction_trigger input item (Codex's remote compaction)", () => {
  const trigger = { type: "compaction_trigger" };

  test("is answered with one compaction item, without running the graph; far fewer tokens", async () => {
    const response = await client.responses.create({ model: "echo", input: [...CONVERSATION, trigger] as never, store: false });
    assertMatchesResponses("Response", response);
    assert.equal(response.status, "completed");
    assert.deepEqual(
      response.output.map((item) => item.type),
      ["compaction"],
    );
    assert.match(String((response.output[0] as { id: string }).id), /^cmp_/u);
    assert.ok(response.usage!.output_tokens * 4 < response.usage!.input_tokens, JSON.stringify(response.usage));
  });

  test("streamed: created, the item added and done, completed; the next turn gets the summary in place of the turns", async () => {
    const stream = await client.responses.create({ model: "echo", input: [...CONVERSATION, trigger] as never, stream: true, store: false });
    const events: { type: string; item?: Record<string, unknown>; response?: { output: Record<string, unknown>[] } }[] = [];
    for await (const event of stream) events.push(event as never);
    for (const event of events) assertMatchesResponses("ResponseStreamEvent", event);
    assert.deepEqual(
      events.map((event) => event.type),
      ["response.created", "response.in_progress", "response.output_item.added", "response.output_item.done", "response.completed"],
    );
    const item = events.at(-1)!.response!.output[0]!;
    // Codex's next turn: its whole history with the item after it, then what is new.
    const next = [...CONVERSATION, item, { type: "message", role: "user", content: "Run the test." }];
    const tokens = await client.responses.inputTokens.count({ model: "echo", input: next as never });
    assert.ok(tokens.input_tokens < 1_000, `${tokens.input_tokens} input tokens: the compacted turns are read once, in the summary`);
    const answer = await client.responses.create({ model: "memory", input: next as never, store: false });
    assert.match(answer.output_text, /You said "Run the test\."\. Before that you said: "Read add\.js/u);
  });

  test("a stored chain is compacted through previous_response_id, and continues from the compaction", async () => {
    const first = await client.responses.create({ model: "echo", input: "first question" });
    const compacted = await client.responses.create({ model: "echo", previous_response_id: first.id, input: [trigger] as never });
    assert.equal(compacted.output[0]?.type, "compaction");
    const next = await client.responses.create({ model: "echo", previous_response_id: compacted.id, input: "next question" });
    assert.equal(next.output_text, "next question");
  });

  test("anywhere but last, it is a 400 naming the item", async () => {
    const response = await fetch(`${server.baseURL}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "echo", input: [trigger, { role: "user", content: "hi" }] }),
    });
    assert.equal(response.status, 400);
    const body = (await response.json()) as { error: { message: string; param: string } };
    assert.equal(body.error.param, "input.0");
    assert.match(body.error.message, /compaction_trigger item must be the final input item/u);
  });
});
