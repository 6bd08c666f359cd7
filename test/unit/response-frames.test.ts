import assert from "node:assert/strict";
import { test } from "node:test";
import { responseFrames } from "../../src/dialects/responses/response-frames.js";
import { ResponseRenderer } from "../../src/dialects/responses/response-renderer.js";
import type { RunStreamEvent } from "../../src/runs/stream-run.js";
import { JsonText } from "../../src/util/json-text.js";
import type { CreateResponseBody } from "../../src/wire/responses-request.js";

const BODY = { model: "echo", input: "hi" } as CreateResponseBody;

// Texts a template could get wrong, an answer interrupted by reasoning and by a status
// message, and the end: every path by which a text delta is or is not written from the template.
const EVENTS: RunStreamEvent[] = [
  { kind: "text", text: "plain" },
  { kind: "text", text: 'quote " and back\\slash' },
  { kind: "text", text: "line\nbreak\ttab\u0000nul ünïcödé 😀 \u2028 </script>" },
  { kind: "text", text: "" },
  { kind: "reasoning", text: "thinking", form: "summary" },
  { kind: "text", text: "__chat_serve_slot_0__" },
  { kind: "event", event: { type: "status", namespace: [], data: { description: "Searching" } } },
  { kind: "text", text: "more" },
  {
    kind: "final",
    output: { text: "", toolCalls: [], annotations: [], finishReason: "stop" },
    usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
  },
];

/** Each frame's type and JSON, its item ids made stable (two renderers draw different random ids). */
function serialized(frames: unknown[]): [string, string][] {
  const ids = new Map<string, string>();
  return frames.map((frame) => {
    const json = frame instanceof JsonText ? frame.json : JSON.stringify(frame);
    const type = (frame as { type: string }).type;
    return [type, json.replace(/\b(msg|rs|fc)_[0-9a-f]+/gu, (id) => ids.get(id) ?? ids.set(id, `id${ids.size}`).get(id)!)];
  });
}

test("a streamed response's frames are byte for byte what its renderer renders, text deltas from the template", () => {
  const plain = new ResponseRenderer("resp_1", BODY, true, true);
  const templated = new ResponseRenderer("resp_1", BODY, true, true);
  // Made in the same second, whichever second each was made in.
  templated.response.created_at = plain.response.created_at;
  const frames = responseFrames(templated);
  const expected = [...plain.start(), ...EVENTS.flatMap((event) => plain.render(event))];
  const actual = [...templated.start(), ...EVENTS.flatMap((event) => frames(event))];
  assert.deepEqual(serialized(actual), serialized(expected));
  // The deltas into an answer already open came from the template, the others did not.
  const fromTemplate = actual.filter((frame) => frame instanceof JsonText);
  assert.equal(fromTemplate.length, 4);
  assert.ok(fromTemplate.every((frame) => frame.type === "response.output_text.delta"));
  // The response the renderer keeps is the same, its text included.
  assert.deepEqual(serialized([templated.response]), serialized([plain.response]));
  assert.equal(templated.response.status, "completed");
});

test("a complete response's renderer takes no text from outside its events", () => {
  const renderer = new ResponseRenderer("resp_2", BODY, true, false);
  renderer.render({ kind: "text", text: "first" });
  assert.equal(renderer.appendText("second"), undefined);
});
