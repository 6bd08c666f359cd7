import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import OpenAI from "openai";
import { startTestServer, type TestServer } from "../helpers/server.js";

// `Idempotency-Key`: one run per key and body, its answer given again to every repeat, a key
// reused with another body refused, a failure not kept, each tenant's keys its own.

const runs = { counted: 0, failing: 0 };

function countingGraph() {
  return new StateGraph(MessagesAnnotation)
    .addNode("respond", async (state) => {
      runs.counted += 1;
      await sleep(150);
      return { messages: [new AIMessage(`run ${runs.counted}: ${state.messages.at(-1)?.text}`)] };
    })
    .addEdge(START, "respond")
    .addEdge("respond", END)
    .compile();
}

function failingGraph() {
  return new StateGraph(MessagesAnnotation)
    .addNode("respond", async () => {
      runs.failing += 1;
      throw new Error("the graph broke");
    })
    .addEdge(START, "respond")
    .addEdge("respond", END)
    .compile();
}

const KEY_A = "sk-tenant-a-0123456789";
const KEY_B = "sk-tenant-b-0123456789";
let server: TestServer;
let client: OpenAI;
before(async () => {
  server = await startTestServer(
    {
      counted: { graph: countingGraph(), description: "counts its runs", streamableNodeNames: ["respond"] },
      failing: { graph: failingGraph(), description: "fails" },
    },
    {
      auth: {
        keys: [
          { tenant: "a", key: KEY_A },
          { tenant: "b", key: KEY_B },
        ],
      },
    },
  );
  client = new OpenAI({ baseURL: server.baseURL, apiKey: KEY_A, maxRetries: 0 });
});
after(() => server.close());

const ask = (content: string) => ({ model: "counted", messages: [{ role: "user" as const, content }] });

test("20 concurrent identical requests with one key start one run, and all get its answer", async () => {
  const before = runs.counted;
  const answers = await Promise.all(
    Array.from({ length: 20 }, () => client.chat.completions.create(ask("once"), { headers: { "Idempotency-Key": "key-concurrent" } })),
  );
  assert.equal(runs.counted, before + 1, "one run");
  assert.equal(new Set(answers.map((answer) => answer.id)).size, 1, "one answer, the same id for all");
  assert.match(answers[0]!.choices[0]!.message.content ?? "", /^run \d+: once$/u);
});

test("Responses: a repeat gets the same response; the key with another body is a 422 naming the header", async () => {
  const first = await client.responses.create({ model: "counted", input: "hello" }, { headers: { "Idempotency-Key": "key-responses" } });
  const before = runs.counted;
  const again = await client.responses.create({ model: "counted", input: "hello" }, { headers: { "Idempotency-Key": "key-responses" } });
  assert.equal(again.id, first.id);
  assert.equal(runs.counted, before, "nothing ran again");
  await assert.rejects(
    client.responses.create({ model: "counted", input: "something else" }, { headers: { "Idempotency-Key": "key-responses" } }),
    (error: InstanceType<typeof OpenAI.APIError>) =>
      error.status === 422 && error.code === "idempotency_key_reused" && error.param === "Idempotency-Key",
  );
});

test("a streamed answer is given again as it was streamed", async () => {
  const stream = async () => {
    const response = await fetch(`${server.baseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${KEY_A}`, "idempotency-key": "key-stream" },
      body: JSON.stringify({ ...ask("streamed"), stream: true }),
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type") ?? "", /^text\/event-stream/u);
    return response.text();
  };
  const first = await stream();
  const before = runs.counted;
  assert.equal(await stream(), first);
  assert.equal(runs.counted, before);
  assert.match(first, /data: \[DONE\]/u);
});

test("a failure is not kept: the repeat runs again", async () => {
  const before = runs.failing;
  for (let index = 0; index < 2; index += 1) {
    await assert.rejects(
      client.chat.completions.create(
        { model: "failing", messages: [{ role: "user", content: "x" }] },
        { headers: { "Idempotency-Key": "key-failing" } },
      ),
      (error: InstanceType<typeof OpenAI.APIError>) => (error.status ?? 0) >= 500,
    );
  }
  assert.equal(runs.failing, before + 2);
});

test("each tenant's keys are its own; a malformed key is a 400 naming the header", async () => {
  const mine = await client.chat.completions.create(ask("tenant"), { headers: { "Idempotency-Key": "key-shared" } });
  const other = new OpenAI({ baseURL: server.baseURL, apiKey: KEY_B, maxRetries: 0 });
  const theirs = await other.chat.completions.create(ask("tenant"), { headers: { "Idempotency-Key": "key-shared" } });
  assert.notEqual(theirs.id, mine.id, "tenant b's request ran on its own");
  const response = await fetch(`${server.baseURL}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${KEY_A}`, "idempotency-key": "has spaces" },
    body: JSON.stringify(ask("x")),
  });
  assert.equal(response.status, 400);
  assert.equal(((await response.json()) as { error: { param: string } }).error.param, "Idempotency-Key");
});

test("a background response's repeat gets the response as it stands now", async () => {
  const queued = await client.responses.create(
    { model: "counted", input: "later", background: true },
    { headers: { "Idempotency-Key": "key-background" } },
  );
  assert.equal(queued.status, "queued");
  let repeat = queued;
  while (repeat.status !== "completed") {
    await sleep(50);
    repeat = await client.responses.create(
      { model: "counted", input: "later", background: true },
      { headers: { "Idempotency-Key": "key-background" } },
    );
    assert.equal(repeat.id, queued.id);
  }
  assert.match(repeat.output_text, /^run \d+: later$/u);
});

test("a streamed background response's repeat reattaches to its events, even after the first client left; one run", async () => {
  const before = runs.counted;
  const body = { model: "counted", input: "streamed later", background: true, stream: true } as const;
  const headers = { headers: { "Idempotency-Key": "key-background-stream" } };
  const first = await client.responses.create(body, headers);
  let id = "";
  for await (const event of first) {
    if (event.type === "response.created") id = event.response.id;
    break; // the client leaves at once; the run goes on
  }
  const repeated: OpenAI.Responses.ResponseStreamEvent[] = [];
  for await (const event of await client.responses.create(body, headers)) repeated.push(event);
  assert.equal((repeated[0] as OpenAI.Responses.ResponseCreatedEvent).response.id, id);
  assert.deepEqual(
    repeated.map((event) => event.sequence_number),
    repeated.map((_, index) => index),
  );
  assert.equal(repeated.at(-1)?.type, "response.completed");
  assert.equal(runs.counted, before + 1);
});
