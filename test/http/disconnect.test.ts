import assert from "node:assert/strict";
import { request as httpRequest } from "node:http";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { type AbortProbe, slowGraph } from "../fixtures/graphs.js";
import { startTestServer } from "../helpers/server.js";

async function waitFor(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("timed out waiting for the condition");
    await sleep(10);
  }
}

for (const stream of [true, false]) {
  test(`a client disconnect aborts the graph run (${stream ? "streaming" : "complete"})`, async () => {
    const probe: AbortProbe = { started: false, chunks: 0, aborted: false, finished: false };
    const server = await startTestServer({
      slow: { graph: slowGraph(probe), description: "Slow", streamableNodeNames: ["respond"] },
    });
    try {
      const url = new URL(`${server.baseURL}/chat/completions`);
      const clientRequest = httpRequest(url, { method: "POST", headers: { "content-type": "application/json" } });
      clientRequest.on("error", () => {});
      clientRequest.end(JSON.stringify({ model: "slow", stream, messages: [{ role: "user", content: "go" }] }));
      if (stream) {
        const response = await new Promise<import("node:http").IncomingMessage>((resolve) => clientRequest.on("response", resolve));
        let received = "";
        await new Promise<void>((resolve) =>
          response.on("data", (data: Buffer) => {
            received += data.toString();
            if (received.includes("word1 ")) resolve();
          }),
        );
      } else {
        await waitFor(() => probe.chunks >= 3);
      }
      clientRequest.destroy();
      await waitFor(() => probe.aborted || probe.finished);
      assert.equal(probe.aborted, true, "the run's AbortSignal fired");
      assert.equal(probe.finished, false, "the graph did not run to completion");
      assert.ok(probe.chunks < 200, `stopped after ${probe.chunks} of 200 chunks`);
      await waitFor(() => server.serve.activeRuns === 0);
    } finally {
      await server.close();
    }
  });
}
