import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { AIMessage } from "@langchain/core/messages";
import {
  type BaseCheckpointSaver,
  Command,
  END,
  interrupt,
  MemorySaver,
  MessagesAnnotation,
  START,
  StateGraph,
} from "@langchain/langgraph";
import pg from "pg";
import { DeadlinePostgresSaver } from "../../src/coordination/deadline-postgres-saver.js";
import { keepLatestCheckpoints } from "../../src/runs/agent/keep-latest.js";
import { dropSchema, POSTGRES_URL, requirePostgres, uniqueSchema } from "../helpers/services.js";

// `checkpointer.ttl`'s `keep_latest`: a thread's checkpoints cut to its latest, on LangGraph's
// MemorySaver and on chat-serve's Postgres saver. Its state and a pending interrupt stay, its
// history goes, another thread keeps all of its own, and the thread runs on from there.

const postgres = await requirePostgres();
const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 2 });
const schemas: string[] = [];
after(async () => {
  await pool.end();
  for (const schema of schemas) await dropSchema(schema);
});

/** Answers, then asks before it answers a message that says "ask". */
function graphWith(checkpointer: BaseCheckpointSaver) {
  return new StateGraph(MessagesAnnotation)
    .addNode("answer", (state) => {
      const last = String(state.messages.at(-1)?.content ?? "");
      const reply = last === "ask" ? `asked: ${interrupt("sure?")}` : `said: ${last}`;
      return { messages: [new AIMessage(reply)] };
    })
    .addEdge(START, "answer")
    .addEdge("answer", END)
    .compile({ checkpointer });
}

const user = (content: string) => ({ messages: [{ role: "user", content }] });

for (const [name, make, skip] of [
  ["MemorySaver", async () => new MemorySaver(), false],
  [
    "the Postgres saver",
    async () => {
      const schema = uniqueSchema();
      schemas.push(schema);
      const saver = new DeadlinePostgresSaver(pool, { schema, timeoutMs: 5_000 });
      await saver.setup();
      return saver;
    },
    postgres.skip,
  ],
] as const) {
  describe(`keep_latest on ${name}`, { skip }, () => {
    test("one checkpoint left, the state and the pending interrupt with it; another thread untouched", async () => {
      const saver = await make();
      const graph = graphWith(saver);
      const thread = { configurable: { thread_id: `keep-${crypto.randomUUID()}` } };
      const other = { configurable: { thread_id: `other-${crypto.randomUUID()}` } };
      for (const text of ["one", "two", "ask"]) await graph.invoke(user(text), thread);
      await graph.invoke(user("elsewhere"), other);
      const count = async (config: typeof thread) => {
        let found = 0;
        for await (const _tuple of saver.list(config)) found += 1;
        return found;
      };
      const otherBefore = await count(other);
      assert.ok((await count(thread)) > 3);
      const before = await graph.getState(thread);

      assert.equal(await keepLatestCheckpoints(saver, thread.configurable.thread_id), true);
      assert.equal(await count(thread), 1);
      assert.equal(await count(other), otherBefore, "another thread keeps its history");
      const after = await graph.getState(thread);
      assert.deepEqual(after.values, before.values);
      assert.deepEqual(
        after.tasks.flatMap((task) => task.interrupts.map((pending) => pending.value)),
        ["sure?"],
      );
      // The run goes on from the one checkpoint left.
      const resumed = await graph.invoke(new Command({ resume: "yes" }), thread);
      assert.equal(resumed.messages.at(-1)?.content, "asked: yes");
      assert.equal(await keepLatestCheckpoints(saver, thread.configurable.thread_id), true);
      assert.equal(await count(thread), 1);
    });
  });
}

test("a checkpointer chat-serve cannot cut is left whole: false", async () => {
  assert.equal(await keepLatestCheckpoints({ getTuple: async () => undefined }, "thread"), false);
});
