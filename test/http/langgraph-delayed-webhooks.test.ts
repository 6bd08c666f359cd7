import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import { graph as echo } from "../../demo/graphs/echo.js";
import { eventually } from "../helpers/eventually.js";
import { type ReceivedRequest, startReceiver } from "../helpers/loopback-receiver.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// A run's `after_seconds` (pending until then, cancellable meanwhile) and its `webhook` (the
// run POSTed to a receiver when it ends, with the thread's values or the error), in one process;
// the URL rules of langgraph.json's `webhooks` refuse what they should, naming the field.

const input = { messages: [{ role: "user", content: "hello" }] };

let server: TestServer;
let client: Client;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const previous = process.env.LG_WEBHOOK_TOKEN;

before(async () => {
  process.env.LG_WEBHOOK_TOKEN = "token-for-the-receiver";
  receiver = await startReceiver();
  server = await startTestServer(
    { echo: { graph: echo, description: "Echo" } },
    {
      langgraph: {
        // biome-ignore lint/suspicious/noTemplateCurlyInString: LangGraph's own header template syntax
        webhooks: { allowedPorts: [Number(new URL(receiver.url).port)], headers: { "x-token": "Bearer ${{ env.LG_WEBHOOK_TOKEN }}" } },
      },
    },
  );
  client = new Client({ apiUrl: server.origin });
});
after(async () => {
  await server.close();
  await receiver.close();
  if (previous === undefined) delete process.env.LG_WEBHOOK_TOKEN;
  else process.env.LG_WEBHOOK_TOKEN = previous;
});

describe("delayed runs and run webhooks", () => {
  test("after_seconds: pending, then run; the webhook gets the run and the thread's values", async () => {
    const thread = await client.threads.create();
    const started = Date.now();
    const run = await client.runs.create(thread.thread_id, "echo", { input, afterSeconds: 1, webhook: `${receiver.url}/done` });
    assert.equal((await client.runs.get(thread.thread_id, run.run_id)).status, "pending");
    await client.runs.join(thread.thread_id, run.run_id);
    assert.ok(Date.now() - started >= 1_000, "it waited its second");
    assert.equal((await client.runs.get(thread.thread_id, run.run_id)).status, "success");
    await eventually(async () => assert.ok(receiver.requests.some((request) => request.url === "/done")), 10_000);
    const delivered = receiver.requests.find((request) => request.url === "/done") as ReceivedRequest;
    const body = JSON.parse(delivered.body) as Record<string, unknown> & { values: { messages: { content: string }[] } };
    assert.equal(body.run_id, run.run_id);
    assert.equal(body.thread_id, thread.thread_id);
    assert.equal(body.status, "success");
    assert.ok(typeof body.webhook_sent_at === "string" && typeof body.run_ended_at === "string");
    assert.match(body.values.messages.at(-1)!.content, /hello/u);
    assert.equal(delivered.headers["x-token"], "Bearer token-for-the-receiver");
    assert.equal(body.scope, undefined, "the tenant is not sent");
  });

  test("a stateless run's webhook says how it ended, when it started and ended, with its values", async () => {
    const run = await client.runs.create(null, "echo", { input, webhook: `${receiver.url}/stateless` });
    await eventually(
      async () =>
        assert.ok(
          receiver.requests.some((request) => request.url === "/stateless"),
          JSON.stringify(receiver.requests.map((r) => r.url)),
        ),
      10_000,
    );
    const delivered = receiver.requests.find((request) => request.url === "/stateless") as ReceivedRequest;
    const body = JSON.parse(delivered.body) as Record<string, string> & { values: { messages: { content: string }[] } };
    assert.equal(body.run_id, run.run_id);
    assert.equal(body.status, "success");
    assert.ok(body.run_started_at! >= body.created_at! && body.run_ended_at! > body.created_at!, JSON.stringify(body));
    assert.match(body.values.messages.at(-1)!.content, /hello/u);
    assert.equal(delivered.headers["webhook-id"], run.run_id);
  });

  test("a delayed run cancelled before it starts ends interrupted, and never runs", async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "echo", { input, afterSeconds: 30 });
    await client.runs.cancel(thread.thread_id, run.run_id, true);
    assert.equal((await client.runs.get(thread.thread_id, run.run_id)).status, "interrupted");
    assert.deepEqual((await client.threads.getState(thread.thread_id)).values, {});
  });

  test("bad input: a negative after_seconds, a webhook the rules refuse", async () => {
    const send = async (body: Record<string, unknown>) => {
      const response = await fetch(`${server.origin}/runs/wait`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ assistant_id: "echo", input, ...body }),
      });
      return { status: response.status, detail: ((await response.json()) as { detail: string }).detail };
    };
    assert.deepEqual(await send({ after_seconds: -1 }), {
      status: 422,
      detail: "The run is not valid at after_seconds: must be 0 seconds or more.",
    });
    assert.deepEqual(await send({ webhook: "ftp://example.com/x" }), {
      status: 422,
      detail: "webhook: must be an absolute http(s) URL, or a path on this server starting with /.",
    });
    assert.deepEqual(await send({ webhook: "http://169.254.169.254/latest" }), {
      status: 422,
      detail: "webhook: 169.254.169.254 is a cloud metadata or link-local address, which no webhook may reach.",
    });
    assert.deepEqual(await send({ webhook: "http://[::ffff:a9fe:a9fe]/latest" }), {
      status: 422,
      detail: "webhook: ::ffff:a9fe:a9fe carries 169.254.169.254, a cloud metadata or link-local address, which no webhook may reach.",
    });
    assert.deepEqual(await send({ webhook: "http://127.0.0.1:1/elsewhere" }), {
      status: 422,
      detail: "webhook: port 1 is not among the allowed ports.",
    });
  });
});
