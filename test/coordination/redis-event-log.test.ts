import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, describe, test } from "node:test";
import { Redis } from "ioredis";
import { RedisEventLog } from "../../src/background/redis-event-log.js";
import type { LoggedEvent } from "../../src/runs/agent/run-events.js";
import { eventually } from "../helpers/eventually.js";
import { REDIS_URL, requireRedis } from "../helpers/services.js";

// A run's event log in Redis, as the process that writes it reads it back: a follower in the
// writing process reads from memory (no Redis connection of its own), one that began on Redis
// moves to memory once the writer here holds what it has not read, and every follower goes
// back to Redis when the writer here lets go or an append of its fails. Two logs on one
// prefix stand for two processes.

const { skip } = await requireRedis();

const event = (id: number): LoggedEvent => ({ id, event: "values", json: JSON.stringify({ step: id }) });

async function collect(events: AsyncIterable<LoggedEvent>): Promise<number[]> {
  const ids: number[] = [];
  for await (const entry of events) ids.push(entry.id);
  return ids;
}

describe("a run's event log in Redis, read back where it is written", { skip, timeout: 30_000 }, () => {
  const keyPrefix = `cs-log-${randomUUID()}`;
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const other = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const options = { keyPrefix, stream: "agent-run-events", sequenceOf: (entry: LoggedEvent) => entry.id, timeoutMs: 2_000 };
  const here = new RedisEventLog<LoggedEvent>({ redis, ...options });
  const elsewhere = new RedisEventLog<LoggedEvent>({ redis: other, ...options });

  after(async () => {
    await here.close();
    await elsewhere.close();
    const keys = await redis.keys(`${keyPrefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    other.disconnect();
  });

  async function follow(log: RedisEventLog<LoggedEvent>, run: string, after: number) {
    const found = await log.from(run, after, new AbortController().signal);
    assert.equal(found.kind, "events");
    return collect((found as { events: AsyncIterable<LoggedEvent> }).events);
  }

  test("a follower in the writing process reads from memory, and the log ends in Redis for the others", async () => {
    const run = randomUUID();
    await elsewhere.append(run, [event(0)]);
    here.claim(run, 1);
    const reading = follow(here, run, 0);
    await here.append(run, [event(1), event(2)]);
    assert.equal(here.followers, 0, "no Redis connection follows a log written here");
    await here.append(run, [event(3)]);
    assert.equal(await here.last(run), 3);
    await here.finish(run);
    assert.deepEqual(await reading, [1, 2, 3]);
    // What another process reads is the same log, ended.
    assert.deepEqual(await follow(elsewhere, run, -1), [0, 1, 2, 3]);
    assert.deepEqual(await here.from(run, 3, new AbortController().signal), { kind: "past-end", last: 3 });
  });

  test("a follower that began on Redis moves to memory once the writer here holds the rest", async () => {
    const run = randomUUID();
    await elsewhere.append(run, [event(0)]);
    const reading = follow(here, run, -1);
    await eventually(async () => assert.equal(here.followers, 1, "it follows on Redis before the run starts here"), 5_000);
    here.claim(run, 1);
    await here.append(run, [event(1)]);
    await eventually(async () => assert.equal(here.followers, 0, "its connection went back to the pool"), 5_000);
    await here.append(run, [event(2), event(3)]);
    await here.finish(run);
    assert.deepEqual(await reading, [0, 1, 2, 3], "every event once, in order");
  });

  test("a writer here that lets go sends its followers back to Redis, where the run goes on", async () => {
    const run = randomUUID();
    here.claim(run, 0);
    await here.append(run, [event(0), event(1)]);
    const reading = follow(here, run, -1);
    await eventually(async () => assert.equal(await here.last(run), 1), 5_000);
    here.release(run);
    // Another process takes the run over and writes the rest.
    elsewhere.claim(run, 2);
    await elsewhere.append(run, [event(2)]);
    await elsewhere.finish(run);
    assert.deepEqual(await reading, [0, 1, 2]);
  });

  test("an append that Redis refuses (another worker logged that place) sends the followers back to Redis", async () => {
    const run = randomUUID();
    here.claim(run, 0);
    await here.append(run, [event(0)]);
    const reading = follow(here, run, 0);
    // A second worker took the run over and logged event 1 first.
    await elsewhere.append(run, [event(1)]);
    await assert.rejects(here.append(run, [event(1)]));
    await elsewhere.append(run, [event(2)]);
    await elsewhere.finish(run);
    assert.deepEqual(await reading, [1, 2], "the other worker's events, none twice");
  });

  test("closing the log ends the followers it feeds from memory", async () => {
    const log = new RedisEventLog<LoggedEvent>({ redis, ...options });
    const run = randomUUID();
    log.claim(run, 0);
    await log.append(run, [event(0)]);
    const found = await log.from(run, -1, new AbortController().signal);
    const events = (found as unknown as { events: AsyncGenerator<LoggedEvent> }).events;
    assert.equal((await events.next()).value?.id, 0);
    const waiting = events.next();
    await log.close();
    assert.equal((await waiting).done, true, "the follower ended with the log");
    assert.equal(log.followers, 0);
  });
});
