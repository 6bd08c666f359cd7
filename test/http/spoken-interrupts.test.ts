import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { demoGraphs } from "../helpers/demo-graphs.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// A pause told in text, for clients with tools of their own and no graph_interrupt (Claude Code,
// Codex): the question is the answer's text with a marker, the next user message answers it,
// and an error result from a client that cannot run graph_interrupt never resumes the run.

let server: TestServer;
let anthropic: Anthropic;
let openai: OpenAI;

before(async () => {
  server = await startTestServer(demoGraphs(), { anthropic: true });
  anthropic = new Anthropic({ apiKey: "x", baseURL: server.origin, maxRetries: 0 });
  openai = new OpenAI({ apiKey: "x", baseURL: server.baseURL, maxRetries: 0 });
});
after(() => server.close());

const MARKER = /`graph_interrupt:[0-9a-f-]{36}:[0-9a-f]{32}`$/u;
const bash = { name: "Bash", description: "Runs a command", input_schema: { type: "object" as const, properties: {} } };
const shell = { type: "function" as const, name: "exec_command", parameters: { type: "object", properties: {} }, strict: false };
const textOf = (message: Anthropic.Message) => message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("");

describe("Anthropic Messages", () => {
  test("a request with its own tools gets the question as text; the next user message answers it", async () => {
    const first: Anthropic.MessageParam[] = [{ role: "user", content: "ship the release" }];
    const asked = await anthropic.messages.create({ model: "approval", max_tokens: 256, tools: [bash], messages: first });
    assert.equal(asked.stop_reason, "end_turn");
    assert.deepEqual(
      asked.content.map((block) => block.type),
      ["text"],
    );
    assert.match(textOf(asked), /^May I go ahead with: ship the release\? \(approve \/ reject\)\n\n/u);
    assert.match(textOf(asked), MARKER);
    // Claude Code's own notes ride in the user turn: the person's words are the answer.
    const answered = await anthropic.messages.create({
      model: "approval",
      max_tokens: 256,
      tools: [bash],
      messages: [
        ...first,
        { role: "assistant", content: asked.content },
        {
          role: "user",
          content: [
            { type: "text", text: "<system-reminder>\nRemember the house rules.\n</system-reminder>" },
            { type: "text", text: "approve" },
          ],
        },
      ],
    });
    assert.equal(textOf(answered), "Approved: going ahead with ship the release.");
  });

  test("streamed, the question arrives as text deltas and the message ends end_turn", async () => {
    const stream = anthropic.messages.stream({
      model: "approval",
      max_tokens: 256,
      tools: [bash],
      messages: [{ role: "user", content: "tag v2" }],
    });
    const deltas: string[] = [];
    stream.on("text", (text) => deltas.push(text));
    const message = await stream.finalMessage();
    assert.equal(message.stop_reason, "end_turn");
    assert.equal(deltas.join(""), textOf(message));
    assert.match(textOf(message), MARKER);
  });

  test("an is_error result to graph_interrupt asks again in text; it never resumes the run", async () => {
    const first: Anthropic.MessageParam[] = [{ role: "user", content: "drop the table" }];
    const asked = await anthropic.messages.create({ model: "approval", max_tokens: 256, messages: first });
    const call = asked.content.find((block) => block.type === "tool_use");
    assert.ok(call?.type === "tool_use" && call.name === "graph_interrupt");
    const history: Anthropic.MessageParam[] = [
      ...first,
      { role: "assistant", content: asked.content },
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: call.id,
            is_error: true,
            content: "<tool_use_error>Error: No such tool available: graph_interrupt</tool_use_error>",
          },
        ],
      },
    ];
    const again = await anthropic.messages.create({ model: "approval", max_tokens: 256, messages: history });
    assert.equal(again.stop_reason, "end_turn");
    assert.match(textOf(again), /^May I go ahead with: drop the table\?/u);
    assert.match(textOf(again), MARKER);
    // Asked again, not answered: the same question still waits, and "reject" is its answer.
    const answered = await anthropic.messages.create({
      model: "approval",
      max_tokens: 256,
      messages: [...history, { role: "assistant", content: again.content }, { role: "user", content: "reject" }],
    });
    assert.equal(textOf(answered), 'Not approved (you said "reject"): I will not do drop the table.');
  });

  test("a request that offers graph_interrupt itself keeps the tool call", async () => {
    const asked = await anthropic.messages.create({
      model: "approval",
      max_tokens: 256,
      tools: [bash, { ...bash, name: "graph_interrupt" }],
      messages: [{ role: "user", content: "go" }],
    });
    assert.equal(asked.stop_reason, "tool_use");
  });
});

describe("Responses", () => {
  test("a request with function tools gets the question as a message; the history with a reply resumes", async () => {
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: "user", content: "ship the release" }];
    const asked = await openai.responses.create({ model: "approval", input, tools: [shell], store: false });
    assert.equal(asked.status, "completed");
    assert.deepEqual(
      asked.output.map((item) => item.type),
      ["message"],
    );
    assert.match(asked.output_text, MARKER);
    const answered = await openai.responses.create({
      model: "approval",
      tools: [shell],
      store: false,
      input: [...input, { role: "assistant", content: asked.output_text }, { role: "user", content: "approve" }],
    });
    assert.equal(answered.output_text, "Approved: going ahead with ship the release.");
  });

  test("a hosted tool alone is enough; a reply by previous_response_id resumes", async () => {
    const asked = await openai.responses.create({ model: "approval", input: "restart the cluster", tools: [{ type: "web_search" }] });
    assert.match(asked.output_text, MARKER);
    const answered = await openai.responses.create({
      model: "approval",
      previous_response_id: asked.id,
      input: "yes",
      tools: [{ type: "web_search" }],
    });
    assert.equal(answered.output_text, "Approved: going ahead with restart the cluster.");
  });

  test("Codex's 'unsupported call' answer asks again in text", async () => {
    const asked = await openai.responses.create({ model: "approval", input: "rotate the keys" });
    const call = asked.output.find((item) => item.type === "function_call");
    assert.ok(call?.type === "function_call" && call.name === "graph_interrupt");
    const again = await openai.responses.create({
      model: "approval",
      previous_response_id: asked.id,
      input: [{ type: "function_call_output", call_id: call.call_id, output: "unsupported call: graph_interrupt" }],
    });
    assert.match(again.output_text, /^May I go ahead with: rotate the keys\?/u);
    assert.match(again.output_text, MARKER);
    const answered = await openai.responses.create({ model: "approval", previous_response_id: again.id, input: "approve" });
    assert.equal(answered.output_text, "Approved: going ahead with rotate the keys.");
  });
});

test("chat completions keep graph_interrupt calls with tools (the seed's behaviour); an error answer asks again", async () => {
  const tools = [{ type: "function" as const, function: { name: "get_weather", parameters: { type: "object" } } }];
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: "user", content: "deploy" }];
  const paused = await openai.chat.completions.create({ model: "approval", messages, tools });
  assert.equal(paused.choices[0]!.finish_reason, "tool_calls");
  const calls = paused.choices[0]!.message.tool_calls ?? [];
  const again = await openai.chat.completions.create({
    model: "approval",
    messages: [
      ...messages,
      { role: "assistant", content: null, tool_calls: calls },
      ...calls.map((call) => ({ role: "tool" as const, tool_call_id: call.id, content: "No such tool available: graph_interrupt" })),
    ],
  });
  assert.equal(again.choices[0]!.finish_reason, "stop");
  assert.match(again.choices[0]!.message.content ?? "", MARKER);
});

for (const [client, answer] of [
  [
    "Kilo Code (the AI SDK's NoSuchToolError)",
    "Model tried to call unavailable tool 'graph_interrupt'. Available tools: read_file, write_to_file.",
  ],
  ["the AI SDK's InvalidToolInputError", "Invalid input for tool graph_interrupt: Type validation failed"],
  ["an invalid-arguments error", "The arguments provided to the tool are invalid: run_id is required"],
] as const) {
  test(`an error never answers: ${client} asks again, in text, and the next message answers`, async () => {
    const tools = [{ type: "function" as const, function: { name: "read_file", parameters: { type: "object" } } }];
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: "user", content: "deploy" }];
    const paused = await openai.chat.completions.create({ model: "approval", messages, tools });
    const calls = paused.choices[0]!.message.tool_calls ?? [];
    assert.equal(calls.length, 1);
    const asked = [...messages, { role: "assistant" as const, content: null, tool_calls: calls }];
    const again = await openai.chat.completions.create({
      model: "approval",
      tools,
      messages: [...asked, { role: "tool", tool_call_id: calls[0]!.id, content: answer }],
    });
    const question = again.choices[0]!.message.content ?? "";
    assert.match(question, MARKER, "asked again with the marker");
    assert.doesNotMatch(question, /Not approved/u, "the error was not taken as the answer");
    const answered = await openai.chat.completions.create({
      model: "approval",
      tools,
      messages: [
        ...asked,
        { role: "tool", tool_call_id: calls[0]!.id, content: answer },
        { role: "assistant", content: question },
        { role: "user", content: "approve" },
      ],
    });
    assert.equal(answered.choices[0]!.message.content, "Approved: going ahead with deploy.");
  });
}
