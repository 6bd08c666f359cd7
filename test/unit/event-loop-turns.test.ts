import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { EventLoopTurns } from "../../src/util/event-loop-turns.js";

/** Busy for `ms` milliseconds without leaving the current turn. */
function work(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {}
}

test("a loop that never waits lets the event loop turn once its budget is spent", async () => {
  const turns = new EventLoopTurns(4);
  let otherRan = 0;
  const other = setInterval(() => {
    otherRan += 1;
  }, 0);
  try {
    let steps = 0;
    const started = performance.now();
    // 30 steps of 1 ms of work each, chained by promises alone: without turns, nothing else runs.
    while (steps < 30) {
      await turns.take();
      work(1);
      steps += 1;
    }
    assert.ok(performance.now() - started >= 30);
    assert.ok(otherRan >= 4, `another timer ran ${otherRan} times during 30 ms of steps`);
  } finally {
    clearInterval(other);
  }
});

test("a loop whose steps arrive after a wait (a model's tokens) never waits for a turn", async () => {
  const turns = new EventLoopTurns(4);
  await turns.take();
  for (let step = 0; step < 5; step += 1) {
    // A token 6 ms after the last: longer than the budget, but spent waiting, not working.
    await sleep(6);
    let immediateRan = false;
    setImmediate(() => {
      immediateRan = true;
    });
    await turns.take();
    assert.equal(immediateRan, false, `step ${step}: take() waited for the next turn of the event loop`);
    await new Promise((resolve) => setImmediate(resolve));
  }
});

test("the budget counts work since the last wait, not since the last turn taken", async () => {
  const turns = new EventLoopTurns(4);
  await turns.take();
  await sleep(10);
  await turns.take();
  work(2);
  let immediateRan = false;
  setImmediate(() => {
    immediateRan = true;
  });
  await turns.take();
  assert.equal(immediateRan, false, "2 ms of work is within the 4 ms budget");
  work(3);
  await turns.take();
  assert.equal(immediateRan, true, "5 ms of work without a wait: the loop let the event loop turn");
});
