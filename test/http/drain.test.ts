import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { type AbortProbe, echoGraph, slowGraph } from "../fixtures/graphs.js";
import { assertMatchesOpenAI } from "../helpers/openai-schema.js";
import { parseSse, startTestServer } from "../helpers/server.js";

const probe = (): AbortProbe => ({ started: false, chunks: 0, aborted: false, finished: false });

test("a draining server: /ready is 503, new runs get 503 server_shutting_down with Retry-After, the rest still answers", async () => {
  const lines: { level: number; msg: string; err?: unknown }[] = [];
  const server = await startTestServer(
    { echo: { graph: echoGraph(), description: "Echo" } },
    { logger: { level: "info", stream: { write: (line: string) => void lines.push(JSON.parse(line)) } } },
  );
  try {
    // Ready at the root as under the prefix, then draining at both.
    assert.equal((await fetch(`${server.origin}/ready`)).status, 200);
    server.serve.drain();
    for (const url of [`${server.baseURL}/ready`, `${server.origin}/ready`]) {
      const ready = await fetch(url);
      assert.equal(ready.status, 503, url);
      assert.equal(((await ready.json()) as { status: string }).status, "draining");
    }
    for (const [path, body] of [
      ["/chat/completions", { model: "echo", messages: [{ role: "user", content: "hi" }] }],
      ["/responses", { model: "echo", input: "hi" }],
    ] as const) {
      const response = await fetch(`${server.baseURL}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      assert.equal(response.status, 503, path);
      assert.equal(response.headers.get("retry-after"), "1");
      const error = await response.json();
      assertMatchesOpenAI("ErrorResponse", error);
      assert.equal((error as { error: { code: string } }).error.code, "server_shutting_down");
    }
    assert.equal((await fetch(`${server.baseURL}/models`)).status, 200);
    assert.equal((await fetch(`${server.baseURL}/health`)).status, 200, "liveness is not readiness");
    // An expected refusal: one info line each, no error, no stack.
    const refusals = lines.filter((line) => line.msg === "refused a new request: the server is draining");
    assert.equal(refusals.length, 2);
    assert.ok(refusals.every((line) => line.level === 30 && line.err === undefined));
    assert.equal(lines.filter((line) => line.level >= 50).length, 0);
  } finally {
    await server.close();
  }
});

test("abortRuns ends a stream with a server_shutting_down frame and a complete request with that 503", async () => {
  const [streamed, complete] = [probe(), probe()];
  const server = await startTestServer({
    streamed: { graph: slowGraph(streamed), description: "slow", streamableNodeNames: ["respond"] },
    complete: { graph: slowGraph(complete), description: "slow" },
  });
  try {
    const send = (model: string, stream: boolean) =>
      fetch(`${server.baseURL}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model, stream, messages: [{ role: "user", content: "go" }] }),
      });
    const [stream, whole] = [send("streamed", true), send("complete", false)];
    while (streamed.chunks === 0 || complete.chunks === 0) await sleep(10);
    server.serve.drain();
    server.serve.abortRuns();
    const frames = parseSse(await (await stream).text());
    const last = frames.at(-2) as { error: { code: string } };
    assert.equal(last.error.code, "server_shutting_down");
    assert.equal(frames.at(-1), "[DONE]");
    const response = await whole;
    assert.equal(response.status, 503);
    assert.equal(((await response.json()) as { error: { code: string } }).error.code, "server_shutting_down");
    assert.ok(streamed.aborted && complete.aborted, "both runs were aborted through their signals");
    await server.serve.runsSettled();
    assert.equal(server.serve.activeRuns, 0);
  } finally {
    await server.close();
  }
});
