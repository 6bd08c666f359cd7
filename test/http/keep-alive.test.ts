import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { parseSse, startTestServer } from "../helpers/server.js";

/** Says nothing for 250 ms, then answers. */
function quietGraph() {
  return new StateGraph(MessagesAnnotation)
    .addNode("think", async () => {
      await sleep(250);
      return { messages: [new AIMessage("done thinking")] };
    })
    .addEdge(START, "think")
    .addEdge("think", END)
    .compile();
}

test("a silent stream gets keep-alive comments and still ends with the answer", async () => {
  const server = await startTestServer({ quiet: { graph: quietGraph(), description: "Quiet" } }, { keepAliveMs: 50 });
  try {
    const response = await fetch(`${server.baseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "quiet", stream: true, messages: [{ role: "user", content: "hi" }] }),
    });
    const body = await response.text();
    const keepAlives = body.split("\n\n").filter((frame) => frame === ": keep-alive").length;
    assert.ok(keepAlives >= 2, `expected keep-alive comments during 250 ms of silence, got ${keepAlives}`);
    const frames = parseSse(body) as { choices?: { delta: { content?: string } }[] }[];
    const text = frames.map((frame) => (typeof frame === "string" ? "" : (frame.choices?.[0]?.delta.content ?? ""))).join("");
    assert.equal(text, "done thinking");
  } finally {
    await server.close();
  }
});

test("a silent Responses stream gets keep-alive comments too", async () => {
  const server = await startTestServer({ quiet: { graph: quietGraph(), description: "Quiet" } }, { keepAliveMs: 50 });
  try {
    const response = await fetch(`${server.baseURL}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "quiet", stream: true, input: "hi" }),
    });
    const body = await response.text();
    const keepAlives = body.split("\n\n").filter((frame) => frame === ": keep-alive").length;
    assert.ok(keepAlives >= 2, `expected keep-alive comments during 250 ms of silence, got ${keepAlives}`);
    assert.match(body, /event: response\.completed/u);
    assert.doesNotMatch(body, /\[DONE\]/u, "a Responses stream ends with its terminal event");
  } finally {
    await server.close();
  }
});
