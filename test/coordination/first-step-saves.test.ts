import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, describe, test } from "node:test";
import { AIMessage } from "@langchain/core/messages";
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import pg from "pg";
import { DeadlinePostgresSaver } from "../../src/coordination/deadline-postgres-saver.js";
import { createPostgresPool } from "../../src/coordination/postgres-pool.js";
import { BackendUnavailableError } from "../../src/errors/catalogue.js";
import { eventually } from "../helpers/eventually.js";
import { dropSchema, POSTGRES_URL, requirePostgres, uniqueSchema } from "../helpers/services.js";
import { startPostgresProxy } from "../helpers/tcp-proxy.js";

// A queued run checkpoints every step before the next (`durability: "sync"`). Its input
// checkpoint and the `__start__` step after it have nothing to repeat, so the Postgres saver
// saves them without holding the graph's first node: shown here with Postgres stalled behind a
// proxy (the node starts all the same, and the run fails at its next save), then on a working
// one (every checkpoint saved, in order, as LangGraph's own MemorySaver keeps them).

const postgres = await requirePostgres();
const schema = uniqueSchema();
const cleanups: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

function graphWith(checkpointer: BaseCheckpointSaver, started: string[]) {
  return new StateGraph(MessagesAnnotation)
    .addNode("answer", (state) => {
      started.push(String(state.messages.at(-1)?.content));
      return { messages: [new AIMessage(`said: ${state.messages.at(-1)?.content}`)] };
    })
    .addEdge(START, "answer")
    .addEdge("answer", END)
    .compile({ checkpointer });
}

const user = (content: string) => ({ messages: [{ role: "user", content }] });

describe("the first step's saves on the Postgres saver", { skip: postgres.skip, timeout: 30_000 }, () => {
  test("the first node starts while Postgres is stalled; the run then fails at its next save", async () => {
    const { proxy, url } = await startPostgresProxy(POSTGRES_URL);
    // The server's own pool: a query Postgres does not answer ends at its deadline.
    const pool = createPostgresPool({ url, max: 2, timeoutMs: 1_500 });
    cleanups.push(
      () => proxy.stop(),
      () => pool.end(),
    );
    const saver = new DeadlinePostgresSaver(pool, { schema, timeoutMs: 1_500 });
    await saver.setup();
    cleanups.push(() => dropSchema(schema));
    const started: string[] = [];
    const graph = graphWith(saver, started);
    // Stalled once the run has read its thread (its first connection back in the pool): its saves hang.
    pool.once("release", () => proxy.blackhole());
    const run = graph.invoke(user("hello"), { configurable: { thread_id: randomUUID() }, durability: "sync" });
    const failed = assert.rejects(run, BackendUnavailableError);
    await eventually(async () => assert.deepEqual(started, ["hello"], "the node started"), 1_000);
    await failed;
    proxy.restore();
    assert.equal(saver.savingBehind, 0, "no save is left waiting");
  });

  test("every checkpoint is saved, in order, as MemorySaver keeps them", async () => {
    const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 2 });
    cleanups.push(() => pool.end());
    const saver = new DeadlinePostgresSaver(pool, { schema, timeoutMs: 5_000 });
    await saver.setup();
    const thread = { configurable: { thread_id: randomUUID() }, durability: "sync" as const };
    const memory = graphWith(new MemorySaver(), []);
    const saved = graphWith(saver, []);
    for (const text of ["one", "two"]) {
      await memory.invoke(user(text), thread);
      await saved.invoke(user(text), thread);
    }
    assert.equal(saver.savingBehind, 0, "no save is left waiting");
    // Read back by another saver: what is in the database, not what this one holds.
    const reader = graphWith(new DeadlinePostgresSaver(pool, { schema, timeoutMs: 5_000 }), []);
    const steps = async (graph: typeof memory) => {
      const history = [];
      for await (const snapshot of graph.getStateHistory(thread)) {
        history.push({ step: snapshot.metadata?.step, source: snapshot.metadata?.source, messages: snapshot.values.messages?.length });
      }
      return history;
    };
    const expected = await steps(memory);
    assert.equal(expected.length, 6, "three checkpoints a run");
    assert.deepEqual(await steps(reader), expected);
  });
});
