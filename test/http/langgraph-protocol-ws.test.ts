import assert from "node:assert/strict";
import { once } from "node:events";
import { after, before, describe, test } from "node:test";
import { v7 as uuid7 } from "@langchain/core/utils/uuid";
import { Client } from "@langchain/langgraph-sdk";
import { WebSocket } from "ws";
import { graph as approval } from "../../demo/graphs/approval.js";
import { graph as echo } from "../../demo/graphs/echo.js";
import { InMemoryRunCoordinator } from "../../src/coordination/in-memory-run-coordinator.js";
import { GraphFeature } from "../../src/registry/features.js";
import { eventually } from "../helpers/eventually.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// Protocol v2 over a WebSocket (`GET /threads/{id}/stream/events`, upgraded): the SDK's own
// ThreadStream with `transport: "websocket"`, and a raw socket for what a client can get wrong.

const user = (content: string) => ({ messages: [{ role: "user", content }] });
const textOf = (message: unknown) => {
  const content = (message as { content: unknown }).content;
  return typeof content === "string" ? content : (content as { text?: string }[]).map((block) => block.text ?? "").join("");
};

let server: TestServer;
let client: Client;
/** Every socket the tests opened, to count what is left open. */
const sockets: WebSocket[] = [];
const webSocketFactory = (url: string) => {
  const socket = new WebSocket(url);
  sockets.push(socket);
  return socket as unknown as globalThis.WebSocket;
};

before(async () => {
  server = await startTestServer(
    {
      echo: { graph: echo, description: "Echo", streamableNodeNames: ["respond"] },
      approval: {
        graph: approval,
        description: "Asks first",
        features: [GraphFeature.INTERRUPTS],
        runCoordinator: new InMemoryRunCoordinator(),
      },
    },
    { langgraph: { websocket: true } },
  );
  client = new Client({ apiUrl: server.origin });
});
after(() => server.close());

/** A raw socket on a thread, with the messages it received so far and a way to wait for one. */
async function rawSocket(threadId: string) {
  const socket = webSocketFactory(`${server.origin.replace("http", "ws")}/threads/${threadId}/stream/events`) as unknown as WebSocket;
  const received: Record<string, any>[] = [];
  const waiters: (() => void)[] = [];
  socket.on("message", (data) => {
    received.push(JSON.parse(String(data)));
    for (const wake of waiters.splice(0)) wake();
  });
  await once(socket, "open");
  const next = async (matches: (message: Record<string, any>) => boolean) => {
    for (;;) {
      const found = received.find(matches);
      if (found !== undefined) return found;
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  let id = 0;
  const command = async (method: string, params?: unknown) => {
    id += 1;
    const sent = id;
    socket.send(JSON.stringify({ id: sent, method, ...(params === undefined ? {} : { params }) }));
    return next((message) => message.id === sent);
  };
  return { socket, received, next, command };
}

describe("protocol v2 over a WebSocket", () => {
  test("the SDK's ThreadStream: a run streams its values, the state follows, an interrupt is answered", async () => {
    const thread = client.threads.stream({ assistantId: "echo", transport: "websocket", webSocketFactory });
    const values = thread.values;
    const started = (await thread.run.start({ input: user("hello over a socket") })) as { run_id?: string };
    assert.match(String(started.run_id), /^[0-9a-f-]{36}$/u);
    const output = (await values) as { messages: unknown[] };
    assert.equal(textOf(output.messages.at(-1)), "hello over a socket");
    const state = (await thread.state.get({ namespace: [] })) as { values: { messages: unknown[] } };
    assert.equal(state.values.messages.length, 2);
    await thread.close();

    const asking = client.threads.stream({ assistantId: "approval", transport: "websocket", webSocketFactory });
    const asked = asking.values;
    await asking.run.start({ input: user("ship it") });
    await asked;
    assert.equal(asking.interrupted, true);
    const [interrupt] = asking.interrupts as { interruptId: string; payload: { question: string } }[];
    assert.match(interrupt!.payload.question, /ship it/u);
    await asking.input.respond({ namespace: [], interrupt_id: interrupt!.interruptId, response: "approve" });
    await eventually(async () => {
      const after = (await asking.state.get({ namespace: [] })) as { values: { messages: unknown[] } };
      assert.match(textOf(after.values.messages.at(-1)), /^Approved: going ahead with ship it/u, "the answered run has ended");
    }, 5_000);
    await asking.close();
  });

  test("a subscription replays from since, then follows; unsubscribing stops it", async () => {
    const threadId = uuid7();
    const { socket, received, next, command } = await rawSocket(threadId);
    const start = await command("run.start", { assistant_id: "echo", input: user("first") });
    assert.equal(start.type, "success");
    // Subscribed after the run: its events are replayed, in order, after the answer.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const subscribed = await command("subscription.subscribe", { channels: ["lifecycle"] });
    assert.equal(subscribed.type, "success");
    // The root graph's lifecycle (its nodes have their own, under their namespaces).
    const lifecycle = () =>
      received.filter((message) => message.type === "event" && message.method === "lifecycle" && message.params.namespace.length === 0);
    await next(() => lifecycle().some((event) => event.params.data.event === "completed"));
    const answerAt = received.indexOf(subscribed);
    assert.ok(
      lifecycle().every((event) => received.indexOf(event) > answerAt),
      "the replay follows the answer",
    );
    assert.deepEqual(
      lifecycle().map((event) => event.params.data.event),
      ["running", "completed"],
    );
    assert.ok(subscribed.result.replayed_events >= 2);
    // Live: a second run's lifecycle arrives once, not its other channels.
    await command("run.start", { assistant_id: "echo", input: user("second") });
    await next(() => lifecycle().filter((event) => event.params.data.event === "completed").length === 2);
    assert.ok(received.every((message) => message.type !== "event" || message.method === "lifecycle"));
    const seqs = received.filter((message) => message.type === "event").map((event) => event.seq);
    assert.deepEqual(
      seqs,
      [...new Set(seqs)].sort((a, b) => a - b),
      "each event once, in order",
    );
    // `since` skips what was seen.
    const since = await command("subscription.subscribe", { channels: ["lifecycle"], since: seqs.at(-2) });
    assert.equal(since.result.replayed_events, 1);
    assert.equal((await command("subscription.unsubscribe", { subscription_id: subscribed.result.subscription_id })).type, "success");
    // A reconnect restores no subscription (they live with their socket): it says what was missed and where the agents are.
    const reconnected = await command("subscription.reconnect", { run_id: start.result.run_id, last_event_id: String(seqs.at(-2)) });
    assert.equal(reconnected.type, "success");
    assert.equal(reconnected.result.restored, false);
    assert.ok(reconnected.result.missed_events >= 1);
    assert.deepEqual(reconnected.result.current_namespaces[0], { namespace: [], status: "completed" });
    socket.close();
    await once(socket, "close");
  });

  test("each mistake is an error answer in the protocol's terms, and a plain GET is told to upgrade", async () => {
    const { socket, next, command } = await rawSocket(uuid7());
    const badChannel = await command("subscription.subscribe", { channels: ["everything"] });
    assert.equal(badChannel.error, "invalid_argument");
    assert.match(badChannel.message, /not a channel of the protocol/u);
    assert.equal((await command("subscription.unsubscribe", { subscription_id: "nope" })).error, "no_such_subscription");
    assert.equal((await command("time.travel", {})).error, "unknown_command");
    const unknownAssistant = await command("run.start", { assistant_id: "nobody", input: user("hi") });
    assert.equal(unknownAssistant.error, "no_such_run");
    assert.match(unknownAssistant.message, /No assistant with id 'nobody'/u);
    socket.send("not json");
    const notJson = await next((message) => message.id === null);
    assert.equal(notJson.error, "invalid_argument");
    socket.close();
    await once(socket, "close");

    const plain = await fetch(`${server.origin}/threads/${uuid7()}/stream/events`);
    assert.equal(plain.status, 426);
    assert.match(((await plain.json()) as { detail: string }).detail, /protocol v2's WebSocket/u);
  });

  test("a server that closes ends its sockets; none is left open", async () => {
    const own = await startTestServer({ echo: { graph: echo, description: "Echo" } }, { langgraph: { websocket: true } });
    const socket = new WebSocket(`${own.origin.replace("http", "ws")}/threads/${uuid7()}/stream/events`);
    await once(socket, "open");
    const closed = once(socket, "close");
    await own.close();
    const [code] = (await closed) as [number];
    assert.ok([1000, 1001, 1005, 1006].includes(code), `closed with ${code}`);
    // Off, a socket is refused with a 426 that says how to turn it on.
    const off = await startTestServer({ echo: { graph: echo, description: "Echo" } }, { langgraph: { websocket: false } });
    const refused = new WebSocket(`${off.origin.replace("http", "ws")}/threads/${uuid7()}/stream/events`);
    const [, response] = (await once(refused, "unexpected-response")) as [unknown, { statusCode: number }];
    assert.equal(response.statusCode, 426);
    // Given the answer, the client gives up the attempt (ws reports that as an error).
    refused.on("error", () => {});
    refused.terminate();
    const plain = await fetch(`${off.origin}/threads/${uuid7()}/stream/events`);
    assert.match(((await plain.json()) as { detail: string }).detail, /set server\.langgraph to \{ websocket: true \}/u);
    await off.close();
    for (const opened of sockets) {
      if (opened.readyState !== WebSocket.CLOSED) await once(opened, "close");
    }
    assert.ok(sockets.every((opened) => opened.readyState === WebSocket.CLOSED));
  });
});
