import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { MemorySaver } from "@langchain/langgraph";
import OpenAI from "openai";
import { ChatServe } from "../../src/app/chat-serve.js";
import { InMemoryRunCoordinator } from "../../src/coordination/in-memory-run-coordinator.js";
import { GraphRegistry } from "../../src/registry/graph-registry.js";
import { echoGraph } from "../fixtures/graphs.js";
import { type Counter, counterGraph } from "../fixtures/interrupt-graphs.js";
import { assertMatchesOpenAI } from "../helpers/openai-schema.js";

const TOKEN = "scrape-token-0123456789";
let serve: ChatServe;
let origin: string;
let client: OpenAI;

before(async () => {
  const counter: Counter = { before: 0, after: 0 };
  serve = new ChatServe({
    graphs: new GraphRegistry(
      {
        echo: { graph: echoGraph(), description: "Echo", streamableNodeNames: ["respond"] },
        counter: { graph: counterGraph(counter), description: "Counter", features: ["INTERRUPTS"] },
      },
      { runCoordinator: new InMemoryRunCoordinator(), checkpointer: new MemorySaver() },
    ),
    metrics: { token: TOKEN },
  });
  const app = await serve.bind({ prefix: "/v1", langgraph: true });
  origin = await app.listen({ host: "127.0.0.1", port: 0 });
  client = new OpenAI({ baseURL: `${origin}/v1`, apiKey: "unused", maxRetries: 0 });
});
after(() => serve.app.close());

async function scrape(): Promise<string> {
  const response = await fetch(`${origin}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type") ?? "", /^text\/plain/u);
  return response.text();
}

/** The value of one sample, by its name and exact labels (as Prometheus prints them, in order). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels)
    .map(([key, value]) => `${key}="${value}"`)
    .join(",");
  for (const line of text.split("\n")) {
    const match = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/u.exec(line);
    if (match?.[1] !== name) continue;
    const have = (match[2] ?? "")
      .split(",")
      .filter((pair) => pair !== "")
      .sort()
      .join(",");
    if (
      have ===
      wanted
        .split(",")
        .filter((pair) => pair !== "")
        .sort()
        .join(",")
    )
      return Number(match[3]);
  }
  return 0;
}

test("the scrape needs its token", async () => {
  for (const headers of [{}, { authorization: "Bearer wrong" }] as Record<string, string>[]) {
    const response = await fetch(`${origin}/metrics`, { headers });
    assert.equal(response.status, 401);
    assertMatchesOpenAI("ErrorResponse", await response.json());
  }
});

test("after known traffic the counters equal the requests sent and the tokens the responses reported", async () => {
  const before = await scrape();
  let prompt = 0;
  let completion = 0;
  for (let index = 0; index < 3; index += 1) {
    const answer = await client.chat.completions.create({
      model: "echo",
      messages: [{ role: "user", content: `complete number ${index}` }],
    });
    prompt += answer.usage!.prompt_tokens;
    completion += answer.usage!.completion_tokens;
  }
  for (let index = 0; index < 2; index += 1) {
    const stream = await client.chat.completions.create({
      model: "echo",
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: "user", content: "a streamed answer in several words" }],
    });
    for await (const chunk of stream) {
      if (chunk.usage) {
        prompt += chunk.usage.prompt_tokens;
        completion += chunk.usage.completion_tokens;
      }
    }
  }
  const response = await client.responses.create({ model: "echo", input: "via responses" });
  await assert.rejects(client.chat.completions.create({ model: "nope", messages: [{ role: "user", content: "x" }] }), OpenAI.NotFoundError);
  const paused = await client.chat.completions.create({ model: "counter", messages: [{ role: "user", content: "wait" }] });
  assert.equal(paused.choices[0]?.finish_reason, "tool_calls");

  const after = await scrape();
  const delta = (name: string, labels: Record<string, string>) => sample(after, name, labels) - sample(before, name, labels);
  assert.equal(delta("chat_serve_requests_total", { model: "echo", api: "chat.completions", status: "200" }), 5);
  assert.equal(delta("chat_serve_requests_total", { model: "echo", api: "responses", status: "200" }), 1);
  assert.equal(
    delta("chat_serve_requests_total", { model: "", api: "chat.completions", status: "404" }),
    1,
    "an unknown model is not a label",
  );
  assert.equal(delta("chat_serve_errors_total", { code: "model_not_found" }), 1);
  assert.equal(delta("chat_serve_tokens_total", { model: "echo", api: "chat.completions", direction: "in" }), prompt);
  assert.equal(delta("chat_serve_tokens_total", { model: "echo", api: "chat.completions", direction: "out" }), completion);
  assert.equal(delta("chat_serve_tokens_total", { model: "echo", api: "responses", direction: "out" }), response.usage!.output_tokens);
  assert.equal(delta("chat_serve_time_to_first_token_seconds_count", { model: "echo", api: "chat.completions" }), 2, "streams only");
  assert.equal(delta("chat_serve_request_duration_seconds_count", { model: "echo", api: "chat.completions" }), 5);
  assert.equal(sample(after, "chat_serve_open_streams", { api: "chat.completions" }), 0);
  assert.equal(sample(after, "chat_serve_runs_in_flight"), 0);
  assert.equal(sample(after, "chat_serve_pending_interrupts"), 1);
  assert.equal(delta("chat_serve_backend_call_seconds_count", { backend: "lease", operation: "acquire" }), 1);
  assert.ok(sample(after, "process_resident_memory_bytes") > 0, "the default process metrics");
});

test("an Agent Protocol run counts under its own api label, its tokens with its model", async () => {
  const before = await scrape();
  const response = await fetch(`${origin}/runs/wait`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ assistant_id: "echo", input: { messages: [{ role: "user", content: "four words said here" }] } }),
  });
  const values = (await response.json()) as { messages: { usage_metadata?: { input_tokens: number; output_tokens: number } }[] };
  const usage = values.messages.at(-1)?.usage_metadata;
  assert.ok(usage !== undefined && usage.output_tokens > 0);
  const after = await scrape();
  const delta = (name: string, labels: Record<string, string>) => sample(after, name, labels) - sample(before, name, labels);
  assert.equal(delta("chat_serve_requests_total", { model: "", api: "langgraph", status: "200" }), 1);
  assert.equal(delta("chat_serve_tokens_total", { model: "echo", api: "langgraph", direction: "in" }), usage.input_tokens);
  assert.equal(delta("chat_serve_tokens_total", { model: "echo", api: "langgraph", direction: "out" }), usage.output_tokens);
  assert.equal(sample(after, "chat_serve_runs_in_flight"), 0);
});
