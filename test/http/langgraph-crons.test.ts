import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import { graph as echo } from "../../demo/graphs/echo.js";
import { eventually } from "../helpers/eventually.js";
import { startTestServer, type TestServer, TWO_TENANTS } from "../helpers/server.js";

// Crons through the SDK's Client, in one process: a thread's cron fires on its schedule (a
// sixth, seconds field keeps the test short), paused with `enabled: false`, resumed, deleted;
// a stateless cron makes a new thread each time; searched and counted; per tenant; and what a
// client gets wrong is a 422 naming the field.

const input = { messages: [{ role: "user", content: "tick" }] };
const EVERY_SECOND = "* * * * * *";

let server: TestServer;
let client: Client;
let other: Client;

before(async () => {
  server = await startTestServer(
    { echo: { graph: echo, description: "Echo" } },
    {
      langgraph: { maxCronsPerTenant: 3 },
      auth: TWO_TENANTS.auth,
    },
  );
  client = new Client({ apiUrl: server.origin, apiKey: "tenant-a-key-0123456789" });
  other = new Client({ apiUrl: server.origin, apiKey: "tenant-b-key-0123456789" });
});
after(() => server.close());

describe("crons", () => {
  test("a thread's cron fires on its schedule; paused, it stops; deleted, it is gone", async () => {
    const thread = await client.threads.create();
    const cron = await client.crons.createForThread(thread.thread_id, "echo", {
      schedule: EVERY_SECOND,
      input,
      metadata: { kind: "ticker" },
      // A firing while the last run still runs (a loaded machine) waits its turn instead of being skipped.
      multitaskStrategy: "enqueue",
    });
    assert.equal(cron.thread_id, thread.thread_id);
    assert.ok(Date.parse(cron.next_run_date) > Date.now() - 1_000);
    await eventually(async () => assert.ok((await client.runs.list(thread.thread_id)).length >= 2), 30_000);
    const run = (await client.runs.list(thread.thread_id)).at(-1)!;
    assert.equal(run.metadata?.cron_id, cron.cron_id);

    const paused = await client.crons.update(cron.cron_id, { enabled: false });
    assert.equal(paused.enabled, false);
    assert.equal(paused.next_run_date, null);
    // What was running when it paused ends; then nothing more starts.
    await eventually(async () => assert.notEqual((await client.threads.get(thread.thread_id)).status, "busy"), 10_000);
    const count = (await client.runs.list(thread.thread_id)).length;
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    assert.equal((await client.runs.list(thread.thread_id)).length, count);

    assert.deepEqual(
      (await client.crons.search({ threadId: thread.thread_id })).map((found) => [found.cron_id, found.enabled]),
      [[cron.cron_id, false]],
    );
    assert.equal(await client.crons.count({ metadata: { kind: "ticker" } }), 1);
    assert.equal(await other.crons.count({ metadata: { kind: "ticker" } }), 0);
    await assert.rejects(other.crons.delete(cron.cron_id), /404/u);
    await client.crons.delete(cron.cron_id);
    assert.deepEqual(await client.crons.search({ threadId: thread.thread_id }), []);
  });

  test("a stateless cron makes a thread per run, kept with on_run_completed: keep", async () => {
    const cron = await client.crons.create("echo", {
      schedule: EVERY_SECOND,
      input,
      onRunCompleted: "keep",
      metadata: { kind: "stateless" },
    });
    assert.equal(cron.thread_id, null);
    await eventually(async () => assert.ok((await client.threads.search({ metadata: { graph_id: "echo" } })).length >= 1), 15_000);
    await client.crons.delete(cron.cron_id);
  });

  test("a cron whose assistant is deleted turns itself off at its next firing", async () => {
    const assistant = await client.assistants.create({ graphId: "echo", name: "short-lived" });
    const cron = await client.crons.create(assistant.assistant_id, { schedule: EVERY_SECOND, input, metadata: { kind: "orphan" } });
    await client.assistants.delete(assistant.assistant_id);
    await eventually(async () => {
      const [found] = await client.crons.search({ metadata: { kind: "orphan" } });
      assert.equal(found?.enabled, false);
    }, 15_000);
    await client.crons.delete(cron.cron_id);
  });

  test("a tenant's enabled crons stop at server.langgraph.maxCronsPerTenant; another tenant's count apart; disabled ones do not count", async () => {
    const yearly = { schedule: "0 0 1 1 *", input };
    const made = [];
    for (const existing of await client.crons.search({ limit: 100 })) await client.crons.delete(existing.cron_id);
    for (let index = 0; index < 3; index += 1) made.push(await client.crons.create("echo", yearly));
    await assert.rejects(client.crons.create("echo", yearly), (error: Error) => {
      assert.match(error.message, /409/u);
      assert.match(error.message, /You have 3 enabled crons, the most this server allows \(server\.langgraph\.maxCronsPerTenant is 3\)/u);
      return true;
    });
    const paused = await client.crons.create("echo", { ...yearly, enabled: false });
    await assert.rejects(client.crons.update(paused.cron_id, { enabled: true }), /409/u);
    assert.ok((await other.crons.create("echo", yearly)).cron_id, "the other tenant has room of its own");
    await client.crons.update(made[0]!.cron_id, { enabled: false });
    assert.equal((await client.crons.update(paused.cron_id, { enabled: true })).enabled, true);
    for (const cron of [...made, paused]) await client.crons.delete(cron.cron_id);
  });

  test("bad input: a schedule that is no cron expression, an unknown zone, an end that is no date, a thread not there", async () => {
    const send = async (path: string, body: Record<string, unknown>) => {
      const response = await fetch(`${server.origin}${path}`, {
        method: "POST",
        headers: { "x-api-key": "tenant-a-key-0123456789", "content-type": "application/json" },
        body: JSON.stringify({ assistant_id: "echo", ...body }),
      });
      return { status: response.status, detail: ((await response.json()) as { detail: string }).detail };
    };
    const badSchedule = await send("/runs/crons", { schedule: "every day" });
    assert.equal(badSchedule.status, 422);
    assert.match(badSchedule.detail, /^schedule: 'every day' is not a cron expression/u);
    assert.deepEqual(await send("/runs/crons", { schedule: "0 9 * * *", timezone: "Mars/Olympus" }), {
      status: 422,
      detail: "timezone: 'Mars/Olympus' is not an IANA time zone (such as Europe/Paris).",
    });
    assert.deepEqual(await send("/runs/crons", { schedule: "0 9 * * *", end_time: "someday" }), {
      status: 422,
      detail: "end_time: 'someday' is not a date (ISO 8601, such as 2027-01-31T00:00:00Z).",
    });
    assert.equal((await send("/threads/00000000-0000-4000-8000-000000000000/runs/crons", { schedule: "0 9 * * *" })).status, 404);
    assert.equal((await send("/runs/crons", { schedule: "0 9 * * *", assistant_id: "nope" })).status, 404);
  });
});
