import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type RunningServer, startCli } from "../helpers/cli.js";

// The server runs in its own process (the real CLI with the repository's demo config), so a
// server that held its event loop could not hide behind this process's client.
let server: RunningServer;
before(async () => {
  server = await startCli([]);
});
after(async () => {
  await server.stop();
});

test("/health answers while a 1 MB echo is streaming, before that stream ends", { timeout: 120_000 }, async () => {
  const words = Array.from({ length: 500_000 }, (_, index) => (index % 2 === 0 ? "a" : "b")).join(" ");
  const body = JSON.stringify({ model: "echo", stream: true, messages: [{ role: "user", content: words }] });
  assert.ok(body.length > 1_000_000 - 10_000 && body.length < 1_048_576, `a body of about 1 MB (${body.length})`);
  const controller = new AbortController();
  const response = await fetch(`${server.baseURL}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
    signal: controller.signal,
  });
  assert.equal(response.status, 200);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let received = "";
  let streamEnded = false;
  // Wait for the first content delta: the run is producing tokens from here on.
  while (!received.includes('"content":"a')) {
    const { value, done } = await reader.read();
    if (done) break;
    received += decoder.decode(value, { stream: true });
  }
  const reading = (async () => {
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) break;
      received += decoder.decode(value, { stream: true });
      if (received.includes("data: [DONE]")) streamEnded = true;
    }
  })();

  const health = await fetch(`${server.baseURL}/health`);
  assert.equal(health.status, 200);
  assert.equal(streamEnded, false, "/health was answered while the stream was still running");
  controller.abort();
  await reading;
  // The aborted run is gone: the server still answers at once.
  assert.equal((await fetch(`${server.baseURL}/health`)).status, 200);
});
