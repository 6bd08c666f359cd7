import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { clientEvent, statusEvent } from "../../src/events/emit.js";
import { ENVELOPE_KEY, MAX_EVENT_BYTES } from "../../src/events/envelope.js";
import { ToolStatusEvents } from "../../src/events/tool-events.js";
import { readCustomPart } from "../../src/events/validate-event.js";

const envelope = (fields: Record<string, unknown>) => ({
  [ENVELOPE_KEY]: "v1",
  type: "progress",
  namespace: ["research"],
  data: { stage: "search" },
  ...fields,
});

describe("the builders", () => {
  test("statusEvent and clientEvent build versioned envelopes (and need no running graph)", () => {
    assert.deepEqual(statusEvent("Searching", { namespace: ["a", "b"] }), {
      [ENVELOPE_KEY]: "v1",
      type: "status",
      namespace: ["a", "b"],
      data: { description: "Searching", done: false, hidden: false },
    });
    assert.deepEqual(statusEvent("Done", { done: true, hidden: true }).data, { description: "Done", done: true, hidden: true });
    assert.deepEqual(clientEvent("artifact", { id: "x" }), { [ENVELOPE_KEY]: "v1", type: "artifact", namespace: [], data: { id: "x" } });
  });
});

describe("server-side validation of custom stream parts", () => {
  test("valid events of every type pass", () => {
    for (const part of [
      statusEvent("Working"),
      clientEvent("progress", { completed: 1, total: 3 }),
      clientEvent("artifact", { url: "https://x" }),
    ]) {
      const result = readCustomPart(part);
      assert.equal(result.kind, "event");
    }
  });

  test("unrelated custom data is foreign, not invalid", () => {
    for (const part of ["text", 42, null, { progress: 1 }, ["status"]]) assert.deepEqual(readCustomPart(part), { kind: "foreign" });
  });

  const cycle: Record<string, unknown> = {};
  cycle.self = cycle;
  const rejected: [string, unknown, RegExp][] = [
    ["an unknown type", envelope({ type: "toast" }), /type must be one of status, progress, artifact/],
    ["an unknown envelope version", envelope({ [ENVELOPE_KEY]: "v2" }), /unsupported envelope version/],
    [
      "a namespace segment that is not a string",
      envelope({ namespace: ["research", 2] }),
      /namespace\.1: every namespace segment must be a string/,
    ],
    ["a namespace that is not a list", envelope({ namespace: "research" }), /namespace/],
    ["data that is not an object", envelope({ data: [1, 2] }), /data/],
    ["data with a function", envelope({ data: { callback: () => 1 } }), /data\.callback is a function/],
    ["data with a cycle", envelope({ data: cycle }), /cycle/],
    ["data with NaN", envelope({ data: { completed: Number.NaN } }), /data\.completed is NaN/],
    ["data with a BigInt", envelope({ data: { total: 10n } }), /data\.total is a BigInt/],
    ["data with a class instance", envelope({ data: { when: new Date() } }), /data\.when is a Date/],
    ["an extra envelope key", envelope({ colour: "red" }), /colour/],
    ["status data without a description", envelope({ type: "status", data: { done: true, hidden: false } }), /status data\.description/],
    [
      "status data with a non-boolean done",
      envelope({ type: "status", data: { description: "x", done: "yes", hidden: false } }),
      /status data\.done/,
    ],
    [
      "status data with unknown fields",
      envelope({ type: "status", data: { description: "x", done: false, hidden: false, colour: 1 } }),
      /colour/,
    ],
    ["an event over the size cap", envelope({ data: { blob: "x".repeat(MAX_EVENT_BYTES) } }), /the limit is 16384/],
  ];
  for (const [name, part, reason] of rejected) {
    test(`rejects ${name}`, () => {
      const result = readCustomPart(part);
      assert.equal(result.kind, "invalid");
      assert.match((result as { reason: string }).reason, reason);
    });
  }
});

test("a tool LangGraph could not name (its callbacks gave no run name) is 'a tool', never 'unknown'", () => {
  const statuses = new ToolStatusEvents(true);
  const started = statuses.fromPart(["tools:1"], { event: "on_tool_start", toolCallId: "c1", name: "unknown", input: {} });
  const ended = statuses.fromPart(["tools:1"], { event: "on_tool_end", toolCallId: "c1", name: "unknown", output: "x" });
  assert.equal((started?.data as { description?: string } | undefined)?.description, "Calling a tool");
  assert.equal((ended?.data as { description?: string } | undefined)?.description, "Called a tool");
  const named = statuses.fromPart([], { event: "on_tool_start", toolCallId: "c2", name: "tavily_search", input: {} });
  assert.equal((named?.data as { description?: string } | undefined)?.description, "Calling tavily_search");
});
