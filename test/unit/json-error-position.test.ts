import assert from "node:assert/strict";
import { test } from "node:test";
import { jsonErrorPosition } from "../../src/util/json-error-position.js";

test("jsonErrorPosition finds the first character that is not JSON", () => {
  assert.equal(jsonErrorPosition('{"a": [1, 2,]}'), 12);
  assert.equal(jsonErrorPosition('{"a": tru}'), 9);
  assert.equal(jsonErrorPosition('{"a": 1} x'), 9);
  assert.equal(jsonErrorPosition('{"a": "unterminated'), 19, "a text that ends too early: its length");
  assert.equal(jsonErrorPosition("{'single': 1}"), 1);
  assert.equal(jsonErrorPosition('"bad \\x escape"'), 6);
});

test("it agrees with JSON.parse on what is JSON", () => {
  const values = [null, true, 0, -1.5e-7, "x\n\u0000y", [], {}, { a: [1, { b: "c" }], "d e": null }, "😀", [[[[[]]]]]];
  for (const value of values) {
    const text = JSON.stringify(value, null, value !== null && typeof value === "object" ? 2 : undefined);
    assert.equal(jsonErrorPosition(text), text.length, text);
  }
  const broken: [string, number][] = [
    ["", 0],
    ["{", 1],
    ["[1,]", 3],
    ["01", 1],
    ["1.", 1],
    ["-", 0],
    ["nul", 3],
    ['{"a" 1}', 5],
    ['{"a":1,}', 7],
    ["\u0001", 0],
  ];
  for (const [text, position] of broken) {
    assert.throws(() => JSON.parse(text));
    assert.equal(jsonErrorPosition(text), position, JSON.stringify(text));
  }
});
