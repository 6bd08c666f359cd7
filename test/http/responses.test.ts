import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { MemorySaver } from "@langchain/langgraph";
import OpenAI from "openai";
import { graph as approvalGraph } from "../../demo/graphs/approval.js";
import { graph as echoGraph } from "../../demo/graphs/echo.js";
import { graph as plainGraph } from "../../demo/graphs/plain.js";
import { graph as toolsGraph } from "../../demo/graphs/tools.js";
import { ChatServe } from "../../src/app/chat-serve.js";
import { InMemoryRunCoordinator } from "../../src/coordination/in-memory-run-coordinator.js";
import { GraphRegistry } from "../../src/registry/graph-registry.js";
import { type AbortProbe, failingGraph, researchEntry, slowGraph } from "../fixtures/graphs.js";
import { eventually } from "../helpers/eventually.js";
import { assertMatchesResponses } from "../helpers/openai-schema.js";

const probe: AbortProbe = { started: false, chunks: 0, finished: false, aborted: false };
let origin: string;
let close: () => Promise<void>;
let client: OpenAI;

before(async () => {
  const registry = new GraphRegistry(
    {
      echo: { graph: echoGraph, description: "Echo", streamableNodeNames: ["respond"] },
      research: researchEntry(),
      approval: { graph: approvalGraph, description: "Approval", features: ["INTERRUPTS"] },
      tools: { graph: toolsGraph, description: "Tools", streamableNodeNames: ["agent"] },
      plain: { graph: plainGraph, description: "Plain" },
      failing: { graph: failingGraph(), description: "Fails" },
      slow: { graph: slowGraph(probe), description: "Slow", streamableNodeNames: ["respond"] },
    },
    { runCoordinator: new InMemoryRunCoordinator(), checkpointer: new MemorySaver() },
  );
  const app = await new ChatServe({ graphs: registry }).bind();
  origin = await app.listen({ host: "127.0.0.1", port: 0 });
  close = () => app.close();
  client = new OpenAI({ baseURL: `${origin}/v1`, apiKey: "x", maxRetries: 0 });
});
after(() => close());

/** The input that replays the question and a function call, with the call's output. */
function answerInput(question: string, call: { call_id: string; name: string; arguments: string }, output: string) {
  return [
    { role: "user" as const, content: question },
    { type: "function_call" as const, call_id: call.call_id, name: call.name, arguments: call.arguments },
    { type: "function_call_output" as const, call_id: call.call_id, output },
  ];
}

/** Posts a complete Responses body with fetch (any field, typed or not) and returns the validated response. */
async function createRaw(body: Record<string, unknown>): Promise<Record<string, any>> {
  const response = await fetch(`${origin}/v1/responses`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = await response.json();
  assert.equal(response.status, 200, JSON.stringify(json));
  assertMatchesResponses("Response", json);
  return json as Record<string, any>;
}

/** Posts a Responses body and returns the raw stream events, each validated against the schema. */
// Stream events are checked against the schema, then read freely.
type StreamEvent = { type: string; sequence_number: number; [key: string]: any };

async function rawStream(body: Record<string, unknown>): Promise<StreamEvent[]> {
  const response = await fetch(`${origin}/v1/responses`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ ...body, stream: true }),
  });
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type") ?? "", /text\/event-stream/u);
  const text = await response.text();
  const events = text
    .split("\n\n")
    .filter((frame) => frame.includes("data: "))
    .map((frame) => {
      const name = /^event: (.+)$/mu.exec(frame)?.[1];
      const data = JSON.parse(/^data: (.+)$/mu.exec(frame)![1]!);
      assert.equal(name, data.type, "the event: line names the event's type");
      return data;
    });
  for (const event of events) assertMatchesResponses("ResponseStreamEvent", event);
  for (const [index, event] of events.entries()) assert.equal(event.sequence_number, index, "sequence numbers increase by one");
  const terminal = events.filter((event) => ["response.completed", "response.incomplete", "response.failed"].includes(event.type));
  assert.equal(terminal.length, 1, "exactly one terminal event");
  assert.equal(events.at(-1), terminal[0]);
  return events;
}

describe("POST /responses with the openai SDK", () => {
  test("responses.create: echo answers with one final_answer message and usage", async () => {
    const response = await client.responses.create({ model: "echo", input: "hello there friend" });
    assertMatchesResponses("Response", response);
    assert.equal(response.status, "completed");
    assert.equal(response.output_text, "hello there friend");
    assert.match(response.id, /^resp_/u);
    const message = response.output[0] as { type: string; phase?: string };
    assert.equal(message.type, "message");
    assert.equal(message.phase, "final_answer");
    assert.equal(response.usage?.output_tokens, 3);
    assert.ok((response.usage?.input_tokens ?? 0) > 0);
  });

  test("streamed echo carries the same text as complete, with the typed lifecycle", async () => {
    const events = await rawStream({ model: "echo", input: "one two three four" });
    const types = events.map((event) => event.type);
    assert.deepEqual(types.slice(0, 4), [
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
    ]);
    assert.ok(types.filter((type) => type === "response.output_text.delta").length >= 4, "word by word");
    const text = events
      .filter((event) => event.type === "response.output_text.delta")
      .map((event) => event.delta)
      .join("");
    assert.equal(text, "one two three four");
    const completed = events.at(-1)!;
    assert.equal(completed.type, "response.completed");
    assertMatchesResponses("Response", completed.response);
    const added = events.find((event) => event.type === "response.output_item.added")!;
    assert.equal(completed.response.output[0]!.id, added.item.id, "stable item ids");
    assert.equal(completed.response.output[0]!.content[0]!.text, "one two three four");
  });

  test("responses.stream with the SDK's helpers", async () => {
    const stream = client.responses.stream({ model: "echo", input: "streamed through helpers" });
    let deltas = "";
    stream.on("response.output_text.delta", (event) => (deltas += event.delta));
    const final = await stream.finalResponse();
    assert.equal(deltas, "streamed through helpers");
    assert.equal(final.output_text, "streamed through helpers");
  });

  test("tools: a function_call item, then the answer to its output", async () => {
    const first = await client.responses.create({ model: "tools", input: "What is the weather in Oslo?" });
    assertMatchesResponses("Response", first);
    const call = first.output.find((item) => item.type === "function_call");
    assert.ok(call && call.type === "function_call");
    assert.equal(call.name, "get_weather");
    assert.deepEqual(JSON.parse(call.arguments), { city: "Oslo" });
    const second = await client.responses.create({
      model: "tools",
      input: answerInput("What is the weather in Oslo?", call, "sunny, 21 C"),
    });
    assert.equal(second.output_text, "The weather tool says: sunny, 21 C");
  });

  test("research streams status events as commentary items, settings apply, the answer is cited", async () => {
    const events = await rawStream({
      model: "research",
      input: "What is LangGraph?",
      metadata: { graph_stream_events: "v1", graph_runtime_settings: JSON.stringify({ depth: 2 }) },
    });
    const done = events
      .filter((event) => event.type === "response.output_item.done")
      .map((event) => event.item as { phase?: string; type: string; graph_chat_serve?: unknown });
    const commentary = done.filter((item) => item.phase === "commentary");
    assert.ok(commentary.length >= 1, "status events are commentary items");
    assert.ok(
      commentary.every((item) => item.graph_chat_serve !== undefined),
      "each carries its event in the extension",
    );
    const final = done.find((item) => item.phase === "final_answer") as unknown as { content: { annotations: { type: string }[] }[] };
    assert.ok(final.content[0]!.annotations.length > 0, "url_citation annotations");
    assert.ok(events.some((event) => event.type === "response.output_text.annotation.added"));
    const progress = events.filter((event) => event.type === "response.in_progress" && event.graph_chat_serve !== undefined);
    assert.ok(progress.length >= 1, "progress rides on response.in_progress");
  });

  test("the SDK's stream helper still parses a stream with the extension on", async () => {
    const stream = client.responses.stream({
      model: "research",
      input: "What is LangGraph?",
      metadata: { graph_stream_events: "v1" },
    });
    const final = await stream.finalResponse();
    const answer = final.output.find((item) => item.type === "message" && (item as { phase?: string }).phase === "final_answer");
    assert.ok(answer);
  });

  test("bad settings are a 400 before any byte; unknown fields are unknown_parameter", async () => {
    await assert.rejects(
      client.responses.create({ model: "research", input: "x", metadata: { graph_runtime_settings: JSON.stringify({ depth: 99 }) } }),
      (error: InstanceType<typeof OpenAI.APIError>) => error.status === 400 && error.code === "invalid_client_settings",
    );
    const response = await fetch(`${origin}/v1/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "echo", input: "x", nonsense: 1 }),
    });
    assert.equal(response.status, 400);
    const body = (await response.json()) as { error: { code: string } };
    assertMatchesResponses("ErrorResponse", body);
    assert.equal(body.error.code, "unknown_parameter");
  });

  test("what this server cannot do is refused with a sentence; client defaults pass", async () => {
    for (const [field, value] of [["include", ["message.output_text.logprobs"]]] as const) {
      await assert.rejects(
        client.responses.create({ model: "echo", input: "x", [field]: value } as never),
        (error: InstanceType<typeof OpenAI.APIError>) =>
          error.status === 400 && error.code === "unsupported_parameter" && error.param === field,
        field,
      );
    }
    await assert.rejects(
      client.responses.create({ model: "echo", input: [{ type: "item_reference", id: "msg_1" }] } as never),
      (error: InstanceType<typeof OpenAI.APIError>) => error.status === 400 && /store/u.test(error.message),
    );
    // What the Agents SDK, LangChain and the AI SDK send by default.
    const fine = await client.responses.create({
      model: "echo",
      input: "ok",
      include: [],
      tools: [],
      text: {},
      store: true,
      tool_choice: "auto",
      instructions: "Be brief.",
    });
    assert.equal(fine.output_text, "ok");
  });

  test("a replayed function_call needs exactly one output", async () => {
    await assert.rejects(
      client.responses.create({
        model: "tools",
        input: [
          { role: "user", content: "weather?" },
          { type: "function_call", call_id: "call_1", name: "get_weather", arguments: "{}" },
        ],
      }),
      (error: InstanceType<typeof OpenAI.APIError>) => error.status === 400 && error.param === "input.1",
    );
    await assert.rejects(
      client.responses.create({ model: "tools", input: [{ type: "function_call_output", call_id: "call_x", output: "y" }] }),
      (error: InstanceType<typeof OpenAI.APIError>) => error.status === 400 && error.param === "input.0.call_id",
    );
  });
});

test("bodies the published CreateResponse schema accepts are accepted here", async () => {
  const bodies = [
    { model: "echo", input: "plain text" },
    { model: "echo", input: [{ role: "user", content: "a message" }], instructions: "Be brief.", store: false, include: [] },
    {
      model: "tools",
      input: [
        { type: "message", role: "user", content: "weather in Rome?" },
        { type: "function_call", call_id: "call_7", name: "get_weather", arguments: '{"city":"Rome"}' },
        { type: "function_call_output", call_id: "call_7", output: "warm" },
      ],
      tools: [{ type: "function", name: "get_weather", parameters: { type: "object", properties: {} }, strict: false }],
      tool_choice: "auto",
      temperature: 0.2,
      max_output_tokens: 64,
      metadata: { session_id: "s-1" },
    },
  ];
  for (const body of bodies) {
    assertMatchesResponses("CreateResponse", body);
    const response = await fetch(`${origin}/v1/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    assert.equal(response.status, 200, JSON.stringify(body));
    assertMatchesResponses("Response", await response.json());
  }
});

describe("Open Responses conformance", () => {
  test("the response echoes every setting in effect: the request's values, else the defaults", async () => {
    const defaults = await createRaw({ model: "echo", input: "hello" });
    assert.deepEqual(
      {
        temperature: defaults.temperature,
        top_p: defaults.top_p,
        presence_penalty: defaults.presence_penalty,
        frequency_penalty: defaults.frequency_penalty,
        top_logprobs: defaults.top_logprobs,
        truncation: defaults.truncation,
        text: defaults.text,
        reasoning: defaults.reasoning,
        max_output_tokens: defaults.max_output_tokens,
        max_tool_calls: defaults.max_tool_calls,
        service_tier: defaults.service_tier,
        safety_identifier: defaults.safety_identifier,
        prompt_cache_key: defaults.prompt_cache_key,
        parallel_tool_calls: defaults.parallel_tool_calls,
        tool_choice: defaults.tool_choice,
        tools: defaults.tools,
        store: defaults.store,
        background: defaults.background,
      },
      {
        temperature: 1,
        top_p: 1,
        presence_penalty: 0,
        frequency_penalty: 0,
        top_logprobs: 0,
        truncation: "disabled",
        text: { format: { type: "text" }, verbosity: "medium" },
        reasoning: null,
        max_output_tokens: null,
        max_tool_calls: null,
        service_tier: "default",
        safety_identifier: null,
        prompt_cache_key: null,
        parallel_tool_calls: true,
        tool_choice: "auto",
        tools: [],
        store: true,
        background: false,
      },
    );
    const given = await createRaw({
      model: "echo",
      input: "hello",
      temperature: 0.2,
      top_p: 0.5,
      presence_penalty: 1,
      frequency_penalty: -1,
      max_output_tokens: 64,
      reasoning: { effort: "low", summary: "concise" },
      text: { verbosity: "low" },
      truncation: "auto",
      service_tier: "flex",
      safety_identifier: "user-1",
      prompt_cache_key: "cache-1",
      parallel_tool_calls: false,
      tool_choice: "none",
      tools: [{ type: "function", name: "lookup", parameters: null, strict: false }],
    });
    assert.equal(given.temperature, 0.2);
    assert.equal(given.top_p, 0.5);
    assert.equal(given.presence_penalty, 1);
    assert.equal(given.frequency_penalty, -1);
    assert.equal(given.max_output_tokens, 64);
    assert.deepEqual(given.reasoning, { effort: "low", summary: "concise" });
    assert.deepEqual(given.text, { format: { type: "text" }, verbosity: "low" });
    assert.equal(given.truncation, "auto");
    assert.equal(given.service_tier, "flex");
    assert.equal(given.parallel_tool_calls, false);
    assert.deepEqual(given.tools, [{ type: "function", name: "lookup", description: null, parameters: null, strict: false }]);
  });

  test("usage is in every snapshot: null in created and in_progress, then the run's", async () => {
    const events = await rawStream({ model: "echo", input: "count these words" });
    const snapshots = events.filter((event) => event.response !== undefined);
    assert.deepEqual(
      snapshots.slice(0, 2).map((event) => [event.type, event.response.usage]),
      [
        ["response.created", null],
        ["response.in_progress", null],
      ],
    );
    assert.equal(events.at(-1)!.response.usage.output_tokens, 3);
  });

  test("the check fails when a field Open Responses requires goes missing", async () => {
    const response = await client.responses.create({
      model: "echo",
      input: "hi",
      tools: [{ type: "function", name: "f", parameters: null, strict: null }],
    });
    assertMatchesResponses("Response", response);
    const { description: _description, ...tool } = response.tools[0] as unknown as Record<string, unknown>;
    assert.throws(() => assertMatchesResponses("Response", { ...response, tools: [tool] }), /Open Responses.*description/su);
    const { usage: _usage, ...withoutUsage } = response;
    assert.throws(() => assertMatchesResponses("Response", withoutUsage), /Open Responses.*usage/su);
  });
});

test("a user message with content parts: valid, though the published schema's oneOf matches it twice", async () => {
  const body = { model: "echo", input: [{ role: "user", content: [{ type: "input_text", text: "parts" }] }] };
  assert.throws(() => assertMatchesResponses("CreateResponse", body), /oneOf/u, "the published schema refuses it");
  const response = await client.responses.create(body as never);
  assert.equal(response.output_text, "parts");
});

test("GET /models/{model} names the APIs the model is served on", async () => {
  const model = (await (await fetch(`${origin}/v1/models/echo`)).json()) as { graph_chat_serve: { apis: string[] } };
  assert.deepEqual(model.graph_chat_serve.apis, ["chat/completions", "responses"]);
});

describe("failures and disconnects", () => {
  test("no usage reported: usage is zeros, never null (the AI SDK's OpenAI provider fails a step on null)", async () => {
    const response = await client.responses.create({ model: "plain", input: "hi" });
    assertMatchesResponses("Response", response);
    assert.deepEqual(response.usage, {
      input_tokens: 0,
      input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      output_tokens: 0,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 0,
    });
    assert.ok(response.output_text.length > 0);
    const events = await rawStream({ model: "plain", input: "hi" });
    const completed = events.find((event) => event.type === "response.completed");
    assert.equal(completed?.response.usage?.total_tokens, 0, "response.completed carries zeros too");
  });

  test("a failure after the first byte is an error event, then response.failed", async () => {
    const events = await rawStream({ model: "failing", input: "hi" });
    const [error, failed] = events.slice(-2);
    assert.equal(error!.type, "error");
    assert.equal(error!.code, "internal_error");
    assert.deepEqual(
      error!.error,
      { type: "server_error", code: "internal_error", message: error!.message, param: null },
      "Open Responses' shape too",
    );
    assert.equal(failed!.type, "response.failed");
    assert.equal(failed!.response.status, "failed");
    assert.ok(!JSON.stringify(events).includes("hunter2"), "no internal message");
  });

  test("a failure before any byte is an ordinary error response", async () => {
    await assert.rejects(
      client.responses.create({ model: "failing", input: "hi" }),
      (error: InstanceType<typeof OpenAI.APIError>) =>
        error.status === 500 && error.code === "internal_error" && !error.message.includes("hunter2"),
    );
  });

  test("a client that disconnects aborts the run", async () => {
    const controller = new AbortController();
    const response = await fetch(`${origin}/v1/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "slow", input: "go", stream: true }),
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    await reader.read();
    await eventually(async () => assert.ok(probe.chunks > 2, "the graph is streaming"), 5_000, 20);
    controller.abort();
    await eventually(async () => assert.equal(probe.aborted, true), 5_000, 20);
    assert.equal(probe.finished, false);
  });
});

describe("interrupts over the Responses API", () => {
  test("approval pauses with graph_interrupt calls and resumes by replaying them", async () => {
    const paused = await client.responses.create({ model: "approval", input: "deploy the release" });
    assertMatchesResponses("Response", paused);
    const calls = paused.output.filter((item) => item.type === "function_call");
    assert.equal(calls.length, 1);
    const call = calls[0]!;
    assert.ok(call.type === "function_call");
    assert.equal(call.name, "graph_interrupt");
    const args = JSON.parse(call.arguments);
    assert.match(args.run_id, /^[0-9a-f-]{36}$/u);
    assert.equal(typeof args.state_token, "string");
    assert.match(args.payload.question, /deploy the release/u);

    const done = await client.responses.create({
      model: "approval",
      input: answerInput("deploy the release", call, "approve"),
    });
    assert.equal(done.output_text, "Approved: going ahead with deploy the release.");

    // The run is finished: replaying the same answer now conflicts.
    await assert.rejects(
      client.responses.create({
        model: "approval",
        input: answerInput("deploy the release", call, "approve"),
      }),
      (error: InstanceType<typeof OpenAI.APIError>) => error.status === 409 && error.code === "interrupt_state_conflict",
    );
  });

  test("approval resumes with previous_response_id and the outputs alone", async () => {
    const paused = await client.responses.create({ model: "approval", input: "restart the cluster" });
    const call = paused.output.find((item) => item.type === "function_call")!;
    assert.ok(call.type === "function_call");
    const done = await client.responses.create({
      model: "approval",
      previous_response_id: paused.id,
      input: [{ type: "function_call_output", call_id: call.call_id, output: "no thanks" }],
    });
    assert.match(done.output_text, /^Not approved \(you said "no thanks"\)/u);
    assert.equal(done.previous_response_id, paused.id);
    await assert.rejects(
      client.responses.create({
        model: "approval",
        previous_response_id: paused.id,
        input: [{ type: "function_call_output", call_id: call.call_id, output: "approve" }],
      }),
      (error: InstanceType<typeof OpenAI.APIError>) => error.status === 409 && error.code === "interrupt_state_conflict",
    );
    // An id nothing stored: not found, like at OpenAI.
    await assert.rejects(
      client.responses.create({ model: "echo", previous_response_id: "resp_unknown", input: "hi" }),
      (error: InstanceType<typeof OpenAI.APIError>) =>
        error.status === 404 && error.code === "not_found" && error.param === "previous_response_id",
    );
  });

  test("a run paused on chat completions is answered on Responses, and the other way round", async () => {
    const chatPaused = await client.chat.completions.create({ model: "approval", messages: [{ role: "user", content: "ship it" }] });
    const chatCall = chatPaused.choices[0]!.message.tool_calls![0]! as { id: string; function: { name: string; arguments: string } };
    const viaResponses = await client.responses.create({
      model: "approval",
      input: [
        { role: "user", content: "ship it" },
        { type: "function_call", call_id: chatCall.id, name: chatCall.function.name, arguments: chatCall.function.arguments },
        { type: "function_call_output", call_id: chatCall.id, output: "approve" },
      ],
    });
    assert.equal(viaResponses.output_text, "Approved: going ahead with ship it.");

    const responsesPaused = await client.responses.create({ model: "approval", input: "roll back" });
    const call = responsesPaused.output.find((item) => item.type === "function_call")!;
    assert.ok(call.type === "function_call");
    const viaChat = await client.chat.completions.create({
      model: "approval",
      messages: [
        { role: "user", content: "roll back" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: call.call_id, type: "function", function: { name: call.name, arguments: call.arguments } }],
        },
        { role: "tool", tool_call_id: call.call_id, content: "yes" },
      ],
    });
    assert.equal(viaChat.choices[0]!.message.content, "Approved: going ahead with roll back.");
  });

  test("a streamed pause ends with the function_call items and response.completed", async () => {
    const events = await rawStream({ model: "approval", input: "delete the backups" });
    const done = events
      .filter((event) => event.type === "response.output_item.done")
      .map((event) => event.item as { type: string; name?: string });
    assert.deepEqual(
      done.map((item) => [item.type, item.name]),
      [["function_call", "graph_interrupt"]],
    );
    assert.ok(events.some((event) => event.type === "response.function_call_arguments.done"));
  });
});
