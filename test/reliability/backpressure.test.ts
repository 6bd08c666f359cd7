import assert from "node:assert/strict";
import { once } from "node:events";
import net from "node:net";
import { after, before, describe, test } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { WebSocket } from "ws";
import { demoGraphs } from "../helpers/demo-graphs.js";
import { eventually } from "../helpers/eventually.js";
import { buildTestApp, startTestServer, type TestServer } from "../helpers/server.js";

// A client that sends one request and never reads once made the server hold the whole answer:
// 100-160 MiB of heap per client, until it left. Now a run waits while its client's connection
// is full (its model at the next token), and a client that takes nothing for
// `stalledClientTimeoutMs` is dropped, its run ended.

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const STALLED_MS = 1_000;
// About 60,000 words: some 60,000 streamed chunks, tens of megabytes of frames.
const LONG = Array.from({ length: 60_000 }, (_, index) => `w${index}`).join(" ");

let server: TestServer;
before(async () => {
  server = await startTestServer(demoGraphs(), { stalledClientTimeoutMs: STALLED_MS, langgraph: true });
});
after(() => server.close());

/** Sends one HTTP request on a socket that then reads nothing. */
function silentPost(path: string, body: unknown): net.Socket {
  const socket = net.connect(Number(new URL(server.origin).port), "127.0.0.1");
  const json = JSON.stringify(body);
  socket.write(
    `POST ${path} HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(json)}\r\n\r\n${json}`,
  );
  socket.pause();
  return socket;
}

function heapMiB(): number {
  gc();
  return process.memoryUsage().heapUsed / 1_048_576;
}

describe("a client that never reads", { timeout: 90_000 }, () => {
  test("over SSE: its run waits with little held, then the client is dropped and the run ends", async () => {
    const before = heapMiB();
    const sockets = [
      silentPost("/v1/chat/completions", { model: "echo", stream: true, messages: [{ role: "user", content: LONG }] }),
      silentPost("/v1/responses", { model: "echo", stream: true, input: LONG }),
    ];
    await eventually(async () => assert.equal(server.serve.activeRuns, 2), 5_000, 20);
    // Unread, the echo would have finished long ago; it waits for its clients instead.
    await new Promise((resolve) => setTimeout(resolve, 800));
    assert.equal(server.serve.activeRuns, 2, "the runs wait for their clients");
    const held = heapMiB() - before;
    assert.ok(held < 40, `the server holds ${held.toFixed(0)} MiB for two silent clients`);
    // Past the deadline the server drops them and ends their runs.
    await eventually(async () => assert.equal(server.serve.activeRuns, 0), 20_000, 50);
    for (const socket of sockets) socket.destroy();
  });

  test("over the Responses WebSocket mode: the same", async () => {
    const socket = new WebSocket(`${server.origin.replace("http", "ws")}/v1/responses`);
    await once(socket, "open");
    socket.send(JSON.stringify({ type: "response.create", model: "echo", input: LONG }));
    (socket as unknown as { _socket: net.Socket })._socket.pause();
    await eventually(async () => assert.equal(server.serve.activeRuns, 1), 5_000, 20);
    await new Promise((resolve) => setTimeout(resolve, 800));
    assert.equal(server.serve.activeRuns, 1, "the run waits for its client");
    await eventually(async () => assert.equal(server.serve.activeRuns, 0), 20_000, 50);
    socket.terminate();
  });

  test("a client that reads slowly gets the whole answer", async () => {
    const response = await fetch(`${server.baseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "echo", stream: true, messages: [{ role: "user", content: LONG.slice(0, 60_000) }] }),
    });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = "";
    for (let reads = 0; ; reads += 1) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      if (reads % 20 === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    assert.ok(text.endsWith("data: [DONE]\n\n"));
    const words = [...text.matchAll(/"content":"([^"]*)"/gu)].map((match) => match[1]).join("");
    assert.equal(words.trim(), LONG.slice(0, 60_000).trim());
  });

  test("an injected request (no real socket) streams a long answer to its end", async () => {
    // Its response's socket is given by hand, so only the socket's own drain says it took the data.
    const { app } = await buildTestApp(demoGraphs(), { langgraph: true });
    try {
      const input = { messages: [{ role: "user", content: LONG.slice(0, 100_000) }] };
      const agent = await app.inject({
        method: "POST",
        url: "/runs/stream",
        payload: { assistant_id: "echo", input, stream_mode: ["messages-tuple", "values"] },
      });
      assert.equal(agent.statusCode, 200);
      const lastWord = input.messages[0]!.content.trim().split(" ").at(-1)!;
      const lastEvent = agent.body.trimEnd().split("\n\n").at(-1) ?? "";
      assert.ok(lastEvent.startsWith("event: values") && lastEvent.includes(lastWord), "the stream ends with the whole answer");
      const chat = await app.inject({
        method: "POST",
        url: "/v1/chat/completions",
        payload: { model: "echo", stream: true, messages: input.messages },
      });
      assert.ok(chat.body.endsWith("data: [DONE]\n\n"), "the chat stream is whole");
    } finally {
      await app.close();
    }
  });
});
