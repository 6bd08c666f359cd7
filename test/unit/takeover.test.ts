import assert from "node:assert/strict";
import { test } from "node:test";
import { backgroundThreadId, MAX_ATTEMPTS, planStart } from "../../src/background/takeover.js";
import { parseGraphConfig } from "../../src/registry/graph-config.js";

// How a worker starts attempt N of a background run: on a durable thread, going on from its
// last step, from the beginning again, or not at all, saying why.

const graph = { invoke: async () => ({}) };
const plain = parseGraphConfig({ graph, description: "plain" });
const retried = parseGraphConfig({ graph, description: "retried", background: { retry: true } });
const asking = parseGraphConfig({ graph, description: "asks", features: ["INTERRUPTS"] });

test("with a durable checkpointer: every run on the response's thread; a later attempt goes on from its last step", () => {
  const thread = backgroundThreadId("resp_1");
  assert.deepEqual(planStart(plain, "resp_1", 1, true), { kind: "run", durable: { threadId: thread, resume: false } });
  assert.deepEqual(planStart(plain, "resp_1", 2, true), { kind: "run", durable: { threadId: thread, resume: true } });
});

test("without one: a later attempt ends failed, unless the graph opts in to starting again", () => {
  assert.deepEqual(planStart(plain, "resp_1", 1, false), { kind: "run" });
  const lost = planStart(plain, "resp_1", 2, false);
  assert.equal(lost.kind, "fail");
  assert.match(lost.kind === "fail" ? lost.error.message : "", /without a durable checkpointer.*background: \{ retry: true \}/u);
  assert.equal(lost.kind === "fail" ? lost.error.code : "", "background_run_lost");
  assert.deepEqual(planStart(retried, "resp_1", 2, false), { kind: "run" });
});

test("interrupt graphs are taken over like any; no run starts more than the attempts allow", () => {
  assert.equal(planStart(asking, "resp_1", 2, true).kind, "run");
  assert.equal(planStart(asking, "resp_1", 2, false).kind, "fail");
  const tired = planStart(plain, "resp_1", MAX_ATTEMPTS + 1, true);
  assert.match(tired.kind === "fail" ? tired.error.message : "", new RegExp(`stopped ${MAX_ATTEMPTS} times`, "u"));
});
