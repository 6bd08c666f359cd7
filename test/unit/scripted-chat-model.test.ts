import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { HumanMessage } from "@langchain/core/messages";
import { ScriptedChatModel } from "../../src/testing/scripted-chat-model.js";

// Tool calls without an id of the script's own get a fresh one every reply, as a provider's do:
// the same `call_scripted_0` in two turns made Codex refuse the second ("appears twice") and
// Claude Code loop.

describe("ScriptedChatModel", () => {
  test("each reply's tool calls have fresh ids, streamed or not; a scripted id is kept", async () => {
    const model = new ScriptedChatModel({
      respond: () => ({
        text: "",
        toolCalls: [
          { name: "read", args: { path: "a" } },
          { name: "read", args: { path: "b" } },
          { id: "mine", name: "x", args: {} },
        ],
      }),
    });
    const ids: string[] = [];
    for (let turn = 0; turn < 2; turn += 1) {
      const invoked = await model.invoke([new HumanMessage("hi")]);
      ids.push(...(invoked.tool_calls ?? []).map((call) => call.id ?? ""));
      let streamed: Awaited<ReturnType<typeof model.invoke>> | undefined;
      for await (const chunk of await model.stream([new HumanMessage("hi")]))
        streamed = streamed === undefined ? chunk : streamed.concat(chunk);
      ids.push(...(streamed?.tool_calls ?? []).map((call) => call.id ?? ""));
    }
    const generated = ids.filter((id) => id !== "mine");
    assert.equal(generated.length, 8);
    assert.equal(new Set(generated).size, 8, ids.join(", "));
    assert.ok(
      generated.every((id) => /^call_[0-9a-f]{24}$/u.test(id)),
      ids.join(", "),
    );
    assert.equal(ids.filter((id) => id === "mine").length, 4);
  });

  test("streamed reasoning merges into one block, as a provider's does (one index)", async () => {
    const model = new ScriptedChatModel({ respond: () => ({ text: "the answer", reasoning: "let me think about it" }) });
    let merged: Awaited<ReturnType<typeof model.invoke>> | undefined;
    for await (const chunk of await model.stream([new HumanMessage("q")])) merged = merged === undefined ? chunk : merged.concat(chunk);
    const blocks = (merged?.content ?? []) as { type: string; reasoning?: string }[];
    const reasoning = blocks.filter((block) => block.type === "reasoning");
    assert.deepEqual(
      reasoning.map((block) => block.reasoning),
      ["let me think about it"],
      "one block, not one per word",
    );
  });
});
