import assert from "node:assert/strict";
import { test } from "node:test";
import { copyData } from "../../src/util/copy-data.js";
import { withDeadline } from "../../src/util/deadline.js";

test("copyData copies plain data deeply: the copy shares no object with the original", () => {
  const original = {
    id: "resp_1",
    createdAt: new Date("2026-11-24T10:00:00Z"),
    response: { output: [{ type: "message", content: [{ type: "output_text", text: "hi", annotations: [] }] }], usage: null },
    inputItems: [{ id: "msg_1", type: "message", role: "user", content: "hello" }],
    missing: undefined,
  };
  const copy = copyData(original);
  assert.deepEqual(copy, original);
  assert.notEqual(copy.response, original.response);
  assert.notEqual(copy.response.output[0]!.content, original.response.output[0]!.content);
  assert.notEqual(copy.inputItems[0], original.inputItems[0]);
  assert.ok(copy.createdAt instanceof Date);
  assert.notEqual(copy.createdAt, original.createdAt);
  assert.ok(Object.hasOwn(copy, "missing"), "a field set to undefined stays, as structuredClone keeps it");
  copy.response.output[0]!.content[0]!.text = "changed";
  copy.createdAt.setFullYear(2000);
  assert.equal(original.response.output[0]!.content[0]!.text, "hi");
  assert.equal(original.createdAt.getFullYear(), 2026);
});

test("copyData leaves an object that is not plain data to structuredClone", () => {
  const original = { seen: new Map([["a", 1]]), list: [new Set([1])] };
  const copy = copyData(original);
  assert.ok(copy.seen instanceof Map);
  assert.notEqual(copy.seen, original.seen);
  assert.deepEqual([...copy.seen], [["a", 1]]);
  assert.notEqual(copy.list[0], original.list[0]);
});

test("withDeadline with an infinite deadline arms no timer and settles with the operation", async () => {
  const before = process.getActiveResourcesInfo().filter((kind) => kind === "Timeout").length;
  let settle: (value: string) => void = () => {};
  const pending = withDeadline("the store", Number.POSITIVE_INFINITY, new Promise<string>((resolve) => (settle = resolve)));
  assert.equal(process.getActiveResourcesInfo().filter((kind) => kind === "Timeout").length, before);
  settle("done");
  assert.equal(await pending, "done");
  await assert.rejects(withDeadline("the store", Number.POSITIVE_INFINITY, Promise.reject(new Error("refused"))), /refused/u);
});
