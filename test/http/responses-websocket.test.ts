import assert from "node:assert/strict";
import { once } from "node:events";
import { after, before, describe, test } from "node:test";
import OpenAI from "openai";
import { ResponsesWS } from "openai/resources/responses/ws";
import { WebSocket } from "ws";
import { demoGraphs } from "../helpers/demo-graphs.js";
import { assertMatchesOpenResponses, assertMatchesResponses } from "../helpers/openai-schema.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// The Responses WebSocket mode (`GET /v1/responses` upgraded), driven by the openai SDK's own
// `ResponsesWS` client, and by a bare `ws` socket for what a client should never send. The
// requirements are Open Responses' (its WebSocket tests): response.create messages, events as
// on the SSE stream, responses in sequence, previous_response_id continuation (from the store,
// and with store: false from the connection's cache, forgotten when a continuation fails), and
// error events that leave the connection usable.

const KEY = "sk-ws-acme-0123456789";
const OTHER = "sk-ws-globex-0123456789";
let server: TestServer;

before(async () => {
  server = await startTestServer(demoGraphs(), {
    socketIdleMs: 30_000,
    bodyLimit: 64 * 1024,
    auth: {
      keys: [
        { key: KEY, tenant: "acme" },
        { key: OTHER, tenant: "globex" },
      ],
    },
  });
});
after(() => server.close());

type ServerEvent = { type: string } & Record<string, unknown>;

/** A connection with the openai SDK's client, its server events collected. */
async function connect(key = KEY) {
  const client = new OpenAI({ apiKey: key, baseURL: server.baseURL });
  const socket = new ResponsesWS(client);
  const events: ServerEvent[] = [];
  const waiters: (() => void)[] = [];
  socket.on("event", (event) => {
    events.push(event as unknown as ServerEvent);
    for (const wake of waiters.splice(0)) wake();
  });
  socket.on("error", () => {});
  /** Waits for the next event (after `from`) that `done` takes; the events since `from`. */
  const until = async (from: number, done: (event: ServerEvent) => boolean): Promise<ServerEvent[]> => {
    for (;;) {
      const seen = events.slice(from);
      const end = seen.findIndex(done);
      if (end !== -1) return seen.slice(0, end + 1);
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  /** Sends a response.create and collects its events up to its end (completed, failed, or an error event). */
  const create = async (body: Record<string, unknown>) => {
    const from = events.length;
    socket.send({ type: "response.create", ...body } as never);
    return until(from, (event) => ["response.completed", "response.incomplete", "response.failed", "error"].includes(event.type));
  };
  return { socket, events, create, until };
}

const last = (events: ServerEvent[]) => events.at(-1)!;
const responseOf = (events: ServerEvent[]) =>
  last(events).response as {
    id: string;
    status: string;
    output: { type: string; content?: { text: string }[]; name?: string; call_id?: string }[];
  };
const textOf = (events: ServerEvent[]) =>
  responseOf(events)
    .output.flatMap((item) => item.content ?? [])
    .map((part) => part.text)
    .join("");
const errorOf = (events: ServerEvent[]) =>
  last(events) as unknown as { type: string; status: number; error: { code: string; message: string; param: string | null } };

describe("the Responses WebSocket mode", () => {
  test("responses in sequence on one connection, with the SSE stream's events", async () => {
    const { socket, create } = await connect();
    const first = await create({ model: "echo", input: "one two three" });
    assert.deepEqual(
      first.slice(0, 2).map((event) => event.type),
      ["response.created", "response.in_progress"],
    );
    assert.ok(first.some((event) => event.type === "response.output_text.delta"));
    assert.equal(last(first).type, "response.completed");
    assert.equal(textOf(first), "one two three");
    for (const event of first) assertMatchesResponses("ResponseStreamEvent", event);
    const second = await create({ model: "echo", input: "four five" });
    assert.equal(textOf(second), "four five");
    assert.notEqual(responseOf(first).id, responseOf(second).id);
    // The same run over HTTP streams the same event types.
    const sse = await fetch(`${server.baseURL}/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "echo", input: "four five", stream: true }),
    });
    const types = (await sse.text()).split("\n").flatMap((line) => (line.startsWith("event: ") ? [line.slice(7)] : []));
    assert.deepEqual(
      second.map((event) => event.type),
      types,
    );
    socket.close();
  });

  test("previous_response_id continues a stored response; with store: false, the connection's own last one", async () => {
    const { socket, create } = await connect();
    const stored = await create({ model: "memory", input: "my name is Ada" });
    const next = await create({ model: "memory", input: "what is my name?", previous_response_id: responseOf(stored).id });
    assert.match(textOf(next), /Before that you said: "my name is Ada"/u);

    const unstored = await create({ model: "memory", input: "I live in Oslo", store: false });
    const continued = await create({
      model: "memory",
      input: "where do I live?",
      store: false,
      previous_response_id: responseOf(unstored).id,
    });
    assert.equal(last(continued).type, "response.completed");
    assert.match(textOf(continued), /Before that you said: "I live in Oslo"/u);
    // A chain of them: the cache holds the last response, with everything it continued.
    const third = await create({ model: "memory", input: "and my name?", store: false, previous_response_id: responseOf(continued).id });
    assert.match(textOf(third), /"I live in Oslo", "where do I live\?"/u);
    // Not stored: over HTTP, and on another connection, there is nothing to continue.
    const other = await connect();
    const elsewhere = await other.create({ model: "memory", input: "hi", previous_response_id: responseOf(third).id });
    assert.equal(errorOf(elsewhere).status, 404);
    assert.equal(errorOf(elsewhere).error.code, "previous_response_not_found");
    other.socket.close();
    socket.close();
  });

  test("a failed continuation forgets the cached response: continuing it again is previous_response_not_found", async () => {
    const { socket, create } = await connect();
    const first = await create({ model: "echo", input: "remember me", store: false });
    const id = responseOf(first).id;
    const failed = await create({ model: "no-such-model", input: "next", store: false, previous_response_id: id });
    assert.equal(errorOf(failed).status, 404);
    const again = await create({ model: "echo", input: "next", store: false, previous_response_id: id });
    assert.equal(errorOf(again).error.code, "previous_response_not_found");
    // The connection is still usable.
    assert.equal(textOf(await create({ model: "echo", input: "fresh start" })), "fresh start");
    socket.close();
  });

  test("an interrupt is a graph_interrupt call; its answer, continued on the socket, resumes the run", async () => {
    const { socket, create } = await connect();
    const asked = await create({ model: "approval", input: "deploy" });
    const call = responseOf(asked).output.find((item) => item.type === "function_call");
    assert.equal(call?.name, "graph_interrupt");
    const answered = await create({
      model: "approval",
      previous_response_id: responseOf(asked).id,
      input: [{ type: "function_call_output", call_id: call?.call_id, output: "approve" }],
    });
    assert.equal(textOf(answered), "Approved: going ahead with deploy.");
    // The same with store: false: the paused run's id names it; nothing needs the store.
    const unstored = await create({ model: "approval", input: "restart", store: false });
    const pause = responseOf(unstored).output.find((item) => item.type === "function_call");
    const resumed = await create({
      model: "approval",
      store: false,
      previous_response_id: responseOf(unstored).id,
      input: [{ type: "function_call_output", call_id: pause?.call_id, output: "approve" }],
    });
    assert.equal(textOf(resumed), "Approved: going ahead with restart.");
    socket.close();
  });

  test("a tenant cannot continue another tenant's response", async () => {
    const acme = await connect(KEY);
    const mine = await acme.create({ model: "echo", input: "private" });
    const globex = await connect(OTHER);
    const theirs = await globex.create({ model: "echo", input: "x", previous_response_id: responseOf(mine).id });
    assert.equal(errorOf(theirs).error.code, "previous_response_not_found");
    acme.socket.close();
    globex.socket.close();
  });
});

/** A bare socket: raw frames in, parsed events out. */
async function rawSocket(headers: Record<string, string> = { authorization: `Bearer ${KEY}` }) {
  const socket = new WebSocket(`${server.baseURL.replace(/^http/u, "ws")}/responses`, { headers });
  const events: ServerEvent[] = [];
  socket.on("message", (data) => events.push(JSON.parse(String(data)) as ServerEvent));
  await once(socket, "open");
  const next = async (count = 1): Promise<ServerEvent[]> => {
    while (events.length < count) await once(socket, "message");
    return events.splice(0, count);
  };
  return { socket, events, next };
}

describe("what the WebSocket mode refuses", () => {
  test("malformed, binary, unknown, HTTP-only and oversized messages: an error event each, the connection stays usable", async () => {
    const { socket, next, events } = await rawSocket();
    const cases: [string | Buffer, string, number][] = [
      ["{not json", "invalid_json", 400],
      [Buffer.from([1, 2, 3]), "invalid_message", 400],
      ["[1,2]", "invalid_message", 400],
      [JSON.stringify({ type: "session.update" }), "unknown_message_type", 400],
      [JSON.stringify({ type: "response.create", model: "echo", input: "x", stream: false }), "invalid_value", 400],
      [JSON.stringify({ type: "response.create", model: "echo", input: "x", generate: "no" }), "invalid_value", 400],
      [JSON.stringify({ type: "response.create", model: "echo", input: "x", background: true }), "invalid_value", 400],
      [JSON.stringify({ type: "response.create", model: "echo", input: "x".repeat(70 * 1024) }), "request_too_large", 400],
      [JSON.stringify({ type: "response.create", model: "echo", input: "x", temperature: 9 }), "invalid_value", 400],
    ];
    for (const [frame, code, status] of cases) {
      socket.send(frame, { binary: Buffer.isBuffer(frame) });
      const [event] = await next();
      assert.equal(event?.type, "error", JSON.stringify(event));
      assertMatchesOpenResponses("WebSocketErrorEvent", event);
      const error = event as unknown as { status: number; error: { code: string; message: string } };
      assert.equal(error.error.code, code, error.error.message);
      assert.equal(error.status, status);
      assert.ok(error.error.message.length > 20);
    }
    socket.send(JSON.stringify({ type: "response.create", model: "echo", input: "still here" }));
    while (!events.some((event) => event.type === "response.completed")) await once(socket, "message");
    socket.close();
  });

  test("what Codex sends: stream, client_metadata, hosted and namespace tools; a generate: false warm-up, then its continuation", async () => {
    const { socket, events } = await rawSocket();
    const codex = {
      type: "response.create",
      model: "echo",
      stream: true,
      store: false,
      client_metadata: { session_id: "s-1", "x-codex-turn-metadata": "{}" },
      tools: [
        { type: "function", name: "exec_command", parameters: { type: "object" } },
        { type: "namespace", name: "multi_agent_v1", tools: [{ type: "function", name: "spawn_agent", parameters: { type: "object" } }] },
        { type: "web_search", external_web_access: false },
      ],
      input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "warm words" }] }],
    };
    socket.send(JSON.stringify({ ...codex, generate: false }));
    while (!events.some((event) => event.type === "response.completed")) await once(socket, "message");
    const warm = events
      .splice(0)
      .map((event) => event as unknown as { type: string; response: { id: string; output: unknown[]; tools: { name: string }[] } });
    assert.deepEqual(
      warm.map((event) => event.type),
      ["response.created", "response.in_progress", "response.completed"],
    );
    for (const event of warm) assertMatchesResponses("ResponseStreamEvent", event);
    const done = warm.at(-1)!.response;
    assert.deepEqual(done.output, [], "a warm-up runs nothing");
    assert.deepEqual(
      done.tools.map((tool) => tool.name),
      ["exec_command"],
      "only function tools are offered to the graph",
    );
    const second = {
      ...codex,
      previous_response_id: done.id,
      input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "and now" }] }],
    };
    socket.send(JSON.stringify(second));
    while (!events.some((event) => event.type === "response.completed")) await once(socket, "message");
    const completed = events.find((event) => event.type === "response.completed") as unknown as {
      response: { output_text?: string; output: { content?: { text: string }[] }[] };
    };
    assert.equal(completed.response.output.at(-1)?.content?.[0]?.text, "and now");
    socket.close();
  });

  test("Codex's remote compaction: a compaction_trigger gets one compaction item; the next turn reads it as the summary", async () => {
    const { socket, events } = await rawSocket();
    const turn = (input: unknown[], previous?: string) =>
      socket.send(
        JSON.stringify({
          type: "response.create",
          model: "memory",
          stream: true,
          store: false,
          input,
          ...(previous === undefined ? {} : { previous_response_id: previous }),
        }),
      );
    const completed = async () => {
      while (!events.some((event) => event.type === "response.completed" || event.type === "error")) await once(socket, "message");
      const all = events.splice(0);
      const end = all.at(-1) as unknown as {
        type: string;
        response: { id: string; output: { type: string; content?: { text: string }[] }[] };
      };
      assert.equal(end.type, "response.completed", JSON.stringify(end));
      return { all, response: end.response };
    };
    const said = (text: string) => ({ type: "message", role: "user", content: [{ type: "input_text", text }] });
    turn([said("first words")]);
    const first = await completed();
    turn([{ type: "compaction_trigger" }], first.response.id);
    const compacted = await completed();
    assert.deepEqual(
      compacted.all.map((event) => event.type),
      ["response.created", "response.in_progress", "response.output_item.added", "response.output_item.done", "response.completed"],
    );
    for (const event of compacted.all) assertMatchesResponses("ResponseStreamEvent", event);
    assert.deepEqual(
      compacted.response.output.map((item) => item.type),
      ["compaction"],
    );
    turn([said("after compaction")], compacted.response.id);
    const next = await completed();
    // The memory graph says what it was given: the first words, then the summary in place of the answer.
    assert.match(
      next.response.output.at(-1)?.content?.[0]?.text ?? "",
      /You said "after compaction"\. Before that you said: "first words"/u,
    );
    socket.close();
  });

  test("a response.create while a response runs is refused; the running one finishes", async () => {
    const { socket, events } = await rawSocket();
    socket.send(JSON.stringify({ type: "response.create", model: "research", input: "What is LangGraph?" }));
    while (!events.some((event) => event.type === "response.created")) await once(socket, "message");
    socket.send(JSON.stringify({ type: "response.create", model: "echo", input: "me too" }));
    while (!events.some((event) => event.type === "response.completed")) await once(socket, "message");
    const refused = events.find((event) => event.type === "error") as unknown as { error: { code: string } } | undefined;
    assert.equal(refused?.error.code, "response_in_progress");
    assert.equal(events.filter((event) => event.type === "response.created").length, 1);
    socket.close();
  });

  test("no key: the upgrade is refused with 401 before any handshake", async () => {
    const socket = new WebSocket(`${server.baseURL.replace(/^http/u, "ws")}/responses`);
    socket.on("error", () => {});
    const [, response] = (await once(socket, "unexpected-response")) as [unknown, { statusCode: number }];
    assert.equal(response.statusCode, 401);
    socket.terminate();
  });

  test("a GET without the upgrade is told what the path is (426)", async () => {
    const response = await fetch(`${server.baseURL}/responses`, { headers: { authorization: `Bearer ${KEY}` } });
    assert.equal(response.status, 426);
    assert.match(((await response.json()) as { error: { message: string } }).error.message, /WebSocket mode/u);
  });
});

describe("a WebSocket's lifetime", () => {
  test("an idle connection is closed with a reason; a closing server closes the rest (1001), leaving none", async () => {
    const local = await startTestServer(demoGraphs(), { socketIdleMs: 150 });
    const url = `${local.baseURL.replace(/^http/u, "ws")}/responses`;
    const idle = new WebSocket(url);
    await once(idle, "open");
    const [code, reason] = (await once(idle, "close")) as [number, Buffer];
    assert.equal(code, 1000);
    assert.match(String(reason), /Idle for/u);
    await local.close();

    const busyServer = await startTestServer(demoGraphs(), {});
    const busy = new WebSocket(`${busyServer.baseURL.replace(/^http/u, "ws")}/responses`);
    await once(busy, "open");
    const closed = once(busy, "close");
    busy.send(JSON.stringify({ type: "response.create", model: "echo", input: "hello" }));
    await once(busy, "message");
    await busyServer.close();
    const [goingAway] = (await closed) as [number];
    assert.equal(goingAway, 1001);
  });

  test("each response.create counts against the caller's rate limit (429); the connection stays usable", async () => {
    const local = await startTestServer(demoGraphs(), { limits: { requestsPerMinute: 2 } });
    const socket = new WebSocket(`${local.baseURL.replace(/^http/u, "ws")}/responses`);
    const events: { type: string; status?: number; error?: { code: string } }[] = [];
    socket.on("message", (data) => events.push(JSON.parse(String(data)) as never));
    await once(socket, "open");
    const ends = () => events.filter((event) => event.type === "response.completed" || event.type === "error").length;
    for (let index = 1; index <= 3; index += 1) {
      socket.send(JSON.stringify({ type: "response.create", model: "echo", input: `turn ${index}` }));
      while (ends() < index) await once(socket, "message");
    }
    const refused = events.filter((event) => event.type === "error");
    assert.equal(refused.length, 1);
    assert.equal(refused[0]?.status, 429);
    assert.equal(refused[0]?.error?.code, "rate_limit_exceeded");
    socket.close();
    await local.close();
  });

  test("a draining server refuses new responses on open connections (503)", async () => {
    const local = await startTestServer(demoGraphs(), {});
    const socket = new WebSocket(`${local.baseURL.replace(/^http/u, "ws")}/responses`);
    await once(socket, "open");
    local.serve.drain();
    socket.send(JSON.stringify({ type: "response.create", model: "echo", input: "late" }));
    const [data] = (await once(socket, "message")) as [Buffer];
    const event = JSON.parse(String(data)) as { status: number; error: { code: string } };
    assert.equal(event.status, 503);
    assert.equal(event.error.code, "server_shutting_down");
    socket.close();
    await local.close();
  });
});
