import assert from "node:assert/strict";
import { test } from "node:test";
import { HumanMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { graph as approval } from "../../demo/graphs/approval.js";
import { graph as echo } from "../../demo/graphs/echo.js";
import { typedText } from "../../src/index.js";

// Coding agents put their own context in the user's turn (Claude Code's <system-reminder>, Cline's
// and Kilo Code's <environment_details>, Codex's <environment_context>): what the person typed is
// the rest, and the demos answer that.

const turn = (text: string) =>
  new HumanMessage({
    content: [
      { type: "text", text: "<system-reminder>\nThe house rules.\n</system-reminder>" },
      { type: "text", text },
      { type: "text", text: "<environment_details>\n# Current files\nsrc/a.ts\n</environment_details>" },
    ],
  });

test("typedText: a message's text without the apps' context blocks, trimmed", () => {
  assert.equal(typedText(turn("fix the bug")), "fix the bug");
  assert.equal(typedText(new HumanMessage("<environment_context>cwd /x</environment_context>\n  hello  ")), "hello");
  assert.equal(typedText(new HumanMessage("a <b>tag</b> of the person's stays")), "a <b>tag</b> of the person's stays");
  assert.equal(typedText(undefined), "");
});

test("the echo demo echoes what the person typed; a plain message as sent", async () => {
  const withNotes = (await echo.invoke({ messages: [turn("ship it")] })) as { messages: { text: string }[] };
  assert.equal(withNotes.messages.at(-1)?.text, "ship it");
  const plain = (await echo.invoke({ messages: [new HumanMessage("one two")] })) as { messages: { text: string }[] };
  assert.equal(plain.messages.at(-1)?.text, "one two");
});

test("the approval demo asks about what the person typed, not the agent's context", async () => {
  // The demo as the server compiles it: on a checkpointer, so it can pause.
  const compiled = approval.builder.compile({ checkpointer: new MemorySaver() });
  const result = (await compiled.invoke({ messages: [turn("deploy")] }, { configurable: { thread_id: "t1" } })) as {
    __interrupt__?: { value: { question: string } }[];
  };
  assert.equal(result.__interrupt__?.[0]?.value.question, "May I go ahead with: deploy?");
});
