import assert from "node:assert/strict";
import { test } from "node:test";
import { CronScheduler, checkCronTimes, firingsBetween, nextFiring } from "../../src/runs/agent/cron-scheduler.js";
import { type CronRecord, MemoryCronRecords } from "../../src/store/cron-records.js";
import { eventually } from "../helpers/eventually.js";

// The crons' scheduler without a shared queue: a timer per enabled cron, armed again after each
// firing, none left once closed; and the checks of what a client sends for a cron's times.

const cron = (fields: Partial<CronRecord> = {}): CronRecord => ({
  cron_id: "c1",
  scope: "a",
  assistant_id: "echo",
  thread_id: null,
  schedule: "* * * * * *",
  timezone: null,
  end_time: null,
  on_run_completed: "delete",
  payload: {},
  metadata: {},
  enabled: true,
  user_id: null,
  created_at: "2026-12-01T00:00:00.000Z",
  updated_at: "2026-12-01T00:00:00.000Z",
  ...fields,
});

test("the next firing follows the schedule in its zone, and none after the end", () => {
  const after = new Date("2026-12-01T07:30:00.000Z");
  assert.equal(nextFiring(cron({ schedule: "0 9 * * *", timezone: "Europe/Paris" }), after)?.toISOString(), "2026-12-01T08:00:00.000Z");
  assert.equal(nextFiring(cron({ schedule: "0 9 * * *" }), after)?.toISOString(), "2026-12-01T09:00:00.000Z");
  assert.equal(nextFiring(cron({ schedule: "0 9 * * *", end_time: "2026-12-01T08:00:00.000Z" }), after), undefined);
});

test("what a client sends is checked, each mistake naming its field", () => {
  assert.throws(() => checkCronTimes({ schedule: "* * *" }), /schedule: '\* \* \*' is not a cron expression/u);
  assert.throws(() => checkCronTimes({ schedule: "61 * * * *" }), /schedule: '61 \* \* \* \*' is not a cron expression/u);
  assert.throws(() => checkCronTimes({ timezone: "Nowhere/City" }), /timezone: 'Nowhere\/City' is not an IANA time zone/u);
  assert.throws(() => checkCronTimes({ end_time: "tomorrow" }), /end_time: 'tomorrow' is not a date/u);
  checkCronTimes({ schedule: "*/5 * * * *", timezone: "America/New_York", end_time: "2027-01-01T00:00:00Z" });
});

test("a timer per enabled cron fires it and arms again; a disabled one has none; closed, none is left", async () => {
  const records = new MemoryCronRecords();
  const fired: string[] = [];
  const scheduler = new CronScheduler({ records, fire: async (record) => void fired.push(record.cron_id) });
  await records.put(cron());
  await records.put(cron({ cron_id: "off", enabled: false }));
  await scheduler.start();
  assert.equal(scheduler.armed, 1);
  await eventually(async () => assert.ok(fired.length >= 2, `fired ${fired.length}`), 5_000, 100);
  assert.ok(fired.every((id) => id === "c1"));
  await scheduler.arm(cron({ enabled: false }));
  assert.equal(scheduler.armed, 0, "disabled: its timer goes");
  await scheduler.arm(cron());
  assert.equal(scheduler.armed, 1);
  scheduler.close();
  assert.equal(scheduler.armed, 0);
});

test("two processes on one store: each firing is made by the one that marks it first, never twice", async () => {
  const records = new MemoryCronRecords();
  await records.put(cron());
  const fired: string[] = [];
  const make = (name: string) =>
    new CronScheduler({
      records,
      fire: async () => void fired.push(name),
      claim: (record, due) => records.claimFiring(record.scope, record.cron_id, due),
    });
  const [one, two] = [make("one"), make("two")];
  await Promise.all([one.start(), two.start()]);
  const started = Date.now();
  await eventually(async () => assert.ok(fired.length >= 3, `fired ${fired.length}`), 8_000, 100);
  one.close();
  two.close();
  const seconds = (Date.now() - started) / 1000;
  assert.ok(fired.length <= Math.ceil(seconds) + 1, `${fired.length} firings in ${seconds.toFixed(1)} s of a cron firing every second`);
});

test("a firing that takes longer than its period skips the firings meanwhile: counted each time, logged once a minute", async () => {
  const records = new MemoryCronRecords();
  const counted: [string, number][] = [];
  const logged: Record<string, unknown>[] = [];
  const scheduler = new CronScheduler({
    records,
    // Each firing holds the scheduler 2.2 s: every-second firings come due meanwhile.
    fire: () => new Promise((resolve) => setTimeout(resolve, 2_200)),
    log: { warn: (object) => void logged.push(object) },
    countSkipped: (reason, firings) => void counted.push([reason, firings]),
  });
  await records.put(cron());
  await scheduler.start();
  try {
    await eventually(async () => assert.ok(counted.length >= 2, `counted ${JSON.stringify(counted)}`), 10_000, 100);
    assert.ok(
      counted.every(([reason, firings]) => reason === "late" && firings >= 2),
      JSON.stringify(counted),
    );
    assert.equal(logged.length, 1, "one line for the first minute, however many skips");
    assert.equal(logged[0]?.cronId, "c1");
    assert.ok(Number(logged[0]?.late) >= 2);
  } finally {
    scheduler.close();
  }
});

test("a firing the shared queue hands over late counts what its schedule had since it was due", async () => {
  const records = new MemoryCronRecords();
  const counted: [string, number][] = [];
  const fired: string[] = [];
  const scheduler = new CronScheduler({
    records,
    fire: async (record) => void fired.push(record.cron_id),
    countSkipped: (reason, firings) => void counted.push([reason, firings]),
  });
  await records.put(cron());
  await scheduler.fired({ kind: "agent-cron", cronId: "c1", scope: "a" }, Date.now() - 5_500);
  assert.deepEqual(fired, ["c1"]);
  assert.equal(counted.length, 1);
  assert.equal(counted[0]?.[0], "late");
  assert.ok(counted[0]![1] >= 5 && counted[0]![1] <= 6, JSON.stringify(counted));
  await scheduler.fired({ kind: "agent-cron", cronId: "c1", scope: "a" }, Date.now());
  assert.equal(counted.length, 1, "on time: nothing skipped");
});

test("the firings between two times follow the schedule, bounded", () => {
  const from = new Date("2026-12-01T00:00:00.000Z");
  assert.equal(firingsBetween(cron({ schedule: "*/5 * * * *" }), from, new Date("2026-12-01T01:00:00.000Z")), 12);
  assert.equal(firingsBetween(cron({ schedule: "0 9 * * *" }), from, new Date("2026-12-01T08:59:59.000Z")), 0);
  assert.equal(firingsBetween(cron(), from, new Date("2026-12-02T00:00:00.000Z"), 100), 100);
});
