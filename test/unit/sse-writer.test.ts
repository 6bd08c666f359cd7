import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import Fastify from "fastify";
import { type SseRender, writeSse } from "../../src/http/sse-writer.js";

/** Serves `chunks` through writeSse (through `render` when given) and counts the response's write() and end() calls. */
async function responseWrites<T>(chunks: () => AsyncIterable<T>, render?: SseRender<T>): Promise<{ writes: number; body: string }> {
  const app = Fastify();
  let writes = 0;
  app.post("/", async (_request, reply) => {
    const raw = reply.raw;
    const write = raw.write.bind(raw) as (chunk: string) => boolean;
    const end = raw.end.bind(raw) as (chunk?: string) => typeof raw;
    raw.write = ((chunk: string) => {
      writes += 1;
      return write(chunk);
    }) as typeof raw.write;
    raw.end = ((chunk?: string) => {
      if (chunk) writes += 1;
      return end(chunk);
    }) as typeof raw.end;
    await writeSse(
      reply,
      chunks(),
      {
        keepAliveMs: 60_000,
        stalledClientMs: 30_000,
        errorFrame: () => ({ error: { message: "x", type: "x", param: null, code: null } }),
      },
      render,
    );
  });
  const url = await app.listen({ host: "127.0.0.1", port: 0 });
  try {
    const response = await fetch(url, { method: "POST" });
    const body = await response.text();
    return { writes, body };
  } finally {
    await app.close();
  }
}

test("frames produced in one turn of the event loop leave in one write", async () => {
  const { writes, body } = await responseWrites(async function* () {
    for (let index = 0; index < 50; index += 1) yield { index };
  });
  assert.equal(body.match(/^data: \{"index":\d+\}$/gmu)?.length, 50);
  assert.ok(body.endsWith("data: [DONE]\n\n"));
  // The 50 frames and [DONE] in a couple of writes, not one write per frame.
  assert.ok(writes <= 3, `expected the frames batched, saw ${writes} writes`);
});

test("frames produced in different turns are not held back for one another", async () => {
  const { writes, body } = await responseWrites(async function* () {
    for (let index = 0; index < 5; index += 1) {
      await sleep(5);
      yield { index };
    }
  });
  assert.equal(body.match(/^data: \{"index":\d+\}$/gmu)?.length, 5);
  assert.ok(writes >= 5, `expected a write per turn, saw ${writes}`);
});

test("a render turns each item into its frames, opens the stream and ends a failed one", async () => {
  const { body } = await responseWrites(
    async function* () {
      yield 1;
      yield 2;
      throw new Error("the run failed");
    },
    {
      first: [{ opened: true }],
      // An item may need an await first (a dialect saving its answer): both forms are sent in order.
      of: (item: number) => (item === 2 ? sleep(5).then(() => [{ item }, { item, again: true }]) : [{ item }]),
      fail: (error) => [{ failed: (error as Error).message }],
    },
  );
  const frames = body.match(/^data: .*$/gmu) ?? [];
  assert.deepEqual(frames, [
    'data: {"opened":true}',
    'data: {"item":1}',
    'data: {"item":2}',
    'data: {"item":2,"again":true}',
    'data: {"failed":"the run failed"}',
    "data: [DONE]",
  ]);
});
