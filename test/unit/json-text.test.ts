import assert from "node:assert/strict";
import { test } from "node:test";
import { completionChunks, completionFrames } from "../../src/dialects/chat/completion-chunks.js";
import { fillSlots, JsonText, jsonParts } from "../../src/util/json-text.js";

const TEXTS = [
  "plain",
  "",
  'quote " and back\\slash',
  "line\nbreak\ttab\u0000nul",
  "ünïcödé 😀 \u2028",
  "__chat_serve_slot__",
  "</script>",
];

test("a chat completion's text chunk from the template is byte for byte the chunk serialized", () => {
  for (const includeUsage of [false, true]) {
    const identity = { id: "chatcmpl-1", created: 1_700_000_000, model: 'a "model"' };
    const frames = completionFrames(identity, includeUsage);
    const chunks = completionChunks(identity, includeUsage);
    for (const text of TEXTS) {
      const [frame] = frames.of({ kind: "text", text });
      assert.ok(frame instanceof JsonText);
      assert.equal(frame.json, JSON.stringify(chunks.of({ kind: "text", text })[0]));
      assert.deepEqual(JSON.parse(frame.json).choices[0].delta, { content: text });
    }
    // Anything but text is the ordinary chunk.
    assert.deepEqual(
      frames.of({ kind: "reasoning", text: "r", form: "summary" }),
      chunks.of({ kind: "reasoning", text: "r", form: "summary" }),
    );
  }
});

test("a template whose value does not hold each slot once, in order, is refused", () => {
  assert.equal(
    jsonParts(1, () => ({ text: "fixed" })),
    undefined,
  );
  assert.equal(
    jsonParts(1, (slot) => ({ a: slot, b: slot })),
    undefined,
  );
  assert.equal(
    jsonParts(2, (first, second) => ({ a: second, b: first })),
    undefined,
  );
  assert.deepEqual(
    jsonParts(1, (slot) => [slot]),
    ["[", "]"],
  );
  assert.deepEqual(
    jsonParts(2, (text, count) => ({ text, count })),
    ['{"text":', ',"count":', "}"],
  );
});

test("filling some of a template's slots leaves the parts around the others", () => {
  const parts = jsonParts(3, (a, b, c) => ({ a, b, c }))!;
  const [head, middle, tail] = fillSlots(parts, [undefined, 'x "y"']) as [string, string, string];
  const json = `${head}${JSON.stringify(1)}${middle}${JSON.stringify("z")}${tail}`;
  assert.equal(json, JSON.stringify({ a: 1, b: 'x "y"', c: "z" }));
  assert.deepEqual(fillSlots(parts, []), parts);
  assert.deepEqual(fillSlots(parts, [1, 2, 3]), [JSON.stringify({ a: 1, b: 2, c: 3 })]);
});
