import assert from "node:assert/strict";
import { test } from "node:test";
import { randomHex } from "../../src/util/random-hex.js";

test("randomHex gives lowercase hex of the length asked, and no two alike across many refills of its pool", () => {
  const seen = new Set<string>();
  // 1,000 IDs of 16 bytes each use up the 4 KiB pool nearly four times over.
  for (let index = 0; index < 1000; index += 1) {
    const id = randomHex();
    assert.match(id, /^[0-9a-f]{32}$/u);
    seen.add(id);
  }
  assert.equal(seen.size, 1000);
  assert.match(randomHex(48), /^[0-9a-f]{48}$/u);
  assert.match(randomHex(15), /^[0-9a-f]{15}$/u);
  // An ID longer than what is left in the pool comes from a fresh pool, whole.
  for (let index = 0; index < 300; index += 1) assert.match(randomHex(40), /^[0-9a-f]{40}$/u);
});
