import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, describe, test } from "node:test";
import pg from "pg";
import type { ConversationRecord, ConversationStore, ResponseRecord, StoredItem } from "../../src/store/conversation-store.js";
import { UnknownCursorError } from "../../src/store/conversation-store.js";
import { MemoryConversationStore } from "../../src/store/memory-conversation-store.js";
import { PostgresConversationStore } from "../../src/store/postgres-conversation-store.js";
import { dropSchema, POSTGRES_URL, requirePostgres, uniqueSchema } from "../helpers/services.js";

// One contract, both stores: what a server relies on from whichever the config names.

const postgresStatus = await requirePostgres();
const closers: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

async function postgresStore(): Promise<ConversationStore> {
  const schema = uniqueSchema();
  const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 4 });
  pool.on("error", () => {});
  closers.push(() => dropSchema(schema));
  closers.push(() => pool.end());
  const store = new PostgresConversationStore(pool, schema);
  await store.setup();
  // Setup runs once per deployment, and again on every start: it must be safe to repeat.
  await store.setup();
  return store;
}

const implementations: { name: string; skip: string | false; make: () => Promise<ConversationStore> }[] = [
  { name: "memory", skip: false, make: async () => new MemoryConversationStore() },
  { name: "postgres", skip: postgresStatus.skip, make: postgresStore },
];

const id = (prefix: string) => `${prefix}_${randomUUID().replaceAll("-", "")}`;
const message = (text: string): StoredItem => ({
  type: "message",
  id: id("msg"),
  role: "user",
  content: [{ type: "input_text", text }],
  status: "completed",
});
const texts = (items: StoredItem[]) => items.map((item) => (item.content as { text: string }[])[0]!.text);

function response(scope: string, overrides: Partial<ResponseRecord> = {}): ResponseRecord {
  const responseId = id("resp");
  return {
    id: responseId,
    scope,
    model: "m",
    createdAt: new Date(Math.floor(Date.now() / 1000) * 1000),
    response: { id: responseId, object: "response", output: [] },
    inputItems: [message("hello")],
    ...overrides,
  };
}

function conversation(scope: string): ConversationRecord {
  return { id: id("conv"), scope, createdAt: new Date(Math.floor(Date.now() / 1000) * 1000), metadata: { a: "1" }, threadPosition: 0 };
}

for (const { name, skip, make } of implementations) {
  describe(`${name} store contract`, { skip }, () => {
    test("a response is kept with its items, read back whole, in its scope only, and deleted", async () => {
      const store = await make();
      const record = response("a", { previousResponseId: "resp_x", thread: { threadId: "t1", checkpointId: "c1" } });
      assert.equal(await store.saveResponse(record), true);
      assert.deepEqual(await store.getResponse("a", record.id), record);
      assert.equal(await store.getResponse("b", record.id), undefined, "another scope does not see it");
      assert.equal(await store.deleteResponse("b", record.id), undefined, "nor delete it");
      assert.deepEqual(await store.deleteResponse("a", record.id), { released: [{ threadId: "t1", model: "m" }] });
      assert.equal(await store.getResponse("a", record.id), undefined);
      assert.equal(await store.deleteResponse("a", record.id), undefined);
    });

    test("after a restart, unfinished background responses read failed with the reason", async () => {
      const store = await make();
      const running = response("a", { response: { id: "r", status: "in_progress", error: null } });
      const done = response("a", { response: { id: "d", status: "completed", error: null } });
      await store.saveResponse(running);
      await store.saveResponse(done);
      assert.ok((await store.failUnfinished("restarted")) >= 1);
      const failed = (await store.getResponse("a", running.id))!.response;
      assert.equal(failed.status, "failed");
      assert.deepEqual(failed.error, { code: "server_error", message: "restarted" });
      assert.equal((await store.getResponse("a", done.id))!.response.status, "completed");
    });

    test("operators list responses of every scope, newest first, by status", async () => {
      const store = await make();
      const older = response("a", {
        createdAt: new Date(Date.now() - 60_000),
        response: { id: "o", status: "completed", background: false },
      });
      const newer = response("b", { response: { id: "n", status: "in_progress", background: true } });
      await store.saveResponse(older);
      await store.saveResponse(newer);
      const listed = (await store.listResponses({ limit: 1_000 })).filter((row) => row.id === older.id || row.id === newer.id);
      assert.deepEqual(
        listed.map((row) => [row.id, row.scope, row.status, row.background]),
        [
          [newer.id, "b", "in_progress", true],
          [older.id, "a", "completed", false],
        ],
      );
      const running = await store.listResponses({ status: "in_progress", limit: 1_000 });
      assert.ok(running.some((row) => row.id === newer.id) && !running.some((row) => row.id === older.id));
    });

    test("idempotency keys: of many concurrent claims one wins; the answer is kept, or the key let go", async () => {
      const store = await make();
      const key = `responses:${randomUUID()}`;
      const claims = await Promise.all(Array.from({ length: 10 }, () => store.claimIdempotencyKey("a", key, "h1")));
      assert.equal(claims.filter((claim) => claim === undefined).length, 1, "one claim wins");
      assert.ok(claims.every((claim) => claim === undefined || (claim.bodyHash === "h1" && claim.result === undefined)));
      assert.equal(await store.claimIdempotencyKey("b", key, "h2"), undefined, "another scope has keys of its own");
      await store.settleIdempotencyKey("a", key, { status: 200, contentType: "application/json", body: "{}" });
      assert.deepEqual(await store.claimIdempotencyKey("a", key, "h1"), {
        bodyHash: "h1",
        result: { status: 200, contentType: "application/json", body: "{}" },
      });
      await store.releaseIdempotencyKey("b", key);
      assert.equal(await store.getIdempotencyKey("b", key), undefined);
      assert.equal(await store.claimIdempotencyKey("b", key, "h3"), undefined, "a key let go can be claimed again");
    });

    test("saving a response again replaces it (a background response is saved as it goes)", async () => {
      const store = await make();
      const record = response("a", { response: { id: "x", status: "queued" } });
      await store.saveResponse(record);
      const done = { ...record, response: { id: "x", status: "completed" }, thread: { threadId: "t", checkpointId: "c" } };
      await store.saveResponse(done);
      assert.deepEqual(await store.getResponse("a", record.id), done);
      assert.deepEqual((await store.deleteResponse("a", record.id))?.released, [{ threadId: "t", model: "m" }]);
    });

    test("a thread is released only when nothing refers to it any more", async () => {
      const store = await make();
      const thread = { threadId: randomUUID(), checkpointId: "c" };
      const first = response("a", { thread });
      const second = response("a", { thread: { ...thread, checkpointId: "d" } });
      await store.saveResponse(first);
      await store.saveResponse(second);
      assert.deepEqual((await store.deleteResponse("a", first.id))?.released, []);
      assert.deepEqual((await store.deleteResponse("a", second.id))?.released, [{ threadId: thread.threadId, model: "m" }]);
    });

    test("a conversation: created with items, its items paged in both orders, added, read and deleted", async () => {
      const store = await make();
      const record = conversation("a");
      await store.createConversation(record, [message("one"), message("two")]);
      assert.deepEqual(await store.getConversation("a", record.id), record);
      assert.equal(await store.getConversation("b", record.id), undefined);
      assert.equal(await store.addItems("a", record.id, [message("three"), message("four"), message("five")]), true);
      assert.equal(await store.addItems("b", record.id, [message("x")]), false);
      const firstPage = await store.listItems("a", record.id, { limit: 2, order: "asc" });
      assert.deepEqual(texts(firstPage!.items), ["one", "two"]);
      assert.equal(firstPage!.hasMore, true);
      const next = await store.listItems("a", record.id, { limit: 10, order: "asc", after: firstPage!.items[1]!.id });
      assert.deepEqual(texts(next!.items), ["three", "four", "five"]);
      assert.equal(next!.hasMore, false);
      const newest = await store.listItems("a", record.id, { limit: 2, order: "desc" });
      assert.deepEqual(texts(newest!.items), ["five", "four"]);
      await assert.rejects(store.listItems("a", record.id, { limit: 2, order: "asc", after: "msg_none" }), UnknownCursorError);
      assert.equal(await store.listItems("b", record.id, { limit: 2, order: "asc" }), undefined);
      const item = newest!.items[0]!;
      assert.deepEqual(await store.getItem("a", record.id, item.id), item);
      assert.equal(await store.getItem("b", record.id, item.id), undefined);
      assert.equal(await store.deleteItem("b", record.id, item.id), false);
      assert.equal(await store.deleteItem("a", record.id, item.id), true);
      assert.equal(await store.getItem("a", record.id, item.id), undefined);
      const updated = await store.updateConversation("a", record.id, { b: "2" });
      assert.deepEqual(updated?.metadata, { b: "2" });
      assert.equal(await store.updateConversation("b", record.id, {}), undefined);
      assert.deepEqual(await store.deleteConversation("a", record.id), { released: [] });
      assert.equal(await store.getConversation("a", record.id), undefined);
      assert.equal(await store.listItems("a", record.id, { limit: 2, order: "asc" }), undefined);
    });

    test("a response in a conversation appends its items and moves the thread, in one write", async () => {
      const store = await make();
      const record = conversation("a");
      await store.createConversation(record, [message("seeded")]);
      const thread = { threadId: randomUUID(), checkpointId: "c1" };
      const first = response("a", { conversationId: record.id, thread });
      assert.equal(
        await store.saveResponse(first, {
          id: record.id,
          items: [message("one"), message("answer")],
          model: "m",
          thread,
          syncThread: true,
        }),
        true,
      );
      const after = await store.getConversation("a", record.id);
      assert.equal(after?.model, "m");
      assert.deepEqual(after?.thread, thread);
      await store.addItems("a", record.id, [message("added")]);
      const since = await store.itemsSince("a", record.id, after!.threadPosition);
      assert.deepEqual(texts(since!.items), ["added"], "only what the thread has not seen");
      assert.deepEqual(texts((await store.itemsSince("a", record.id, 0))!.items), ["seeded", "one", "answer", "added"]);
      // A conversation deleted meanwhile: nothing is written.
      await store.deleteConversation("a", record.id);
      const orphan = response("a", { conversationId: record.id });
      assert.equal(await store.saveResponse(orphan, { id: record.id, items: [message("x")], model: "m", syncThread: false }), false);
      assert.equal(await store.getResponse("a", orphan.id), undefined, "the response was not stored without its items");
    });

    test("session turns: recorded, longest first, one per history", async () => {
      const store = await make();
      const key = randomUUID();
      const owner = { scope: "a", model: "m" };
      await store.addSessionTurn(key, owner, { length: 2, hash: "h2", thread: { threadId: "t", checkpointId: "c2" } });
      await store.addSessionTurn(key, owner, { length: 4, hash: "h4", thread: { threadId: "t", checkpointId: "c4" } });
      await store.addSessionTurn(key, owner, { length: 4, hash: "h4", thread: { threadId: "t", checkpointId: "c4b" } });
      const turns = await store.sessionTurns(key);
      assert.deepEqual(
        turns.map((turn) => [turn.length, turn.hash, turn.thread.checkpointId]),
        [
          [4, "h4", "c4b"],
          [2, "h2", "c2"],
        ],
      );
      assert.deepEqual(await store.sessionTurns(randomUUID()), []);
    });

    test("purge: what was last used before the cutoff goes, with the threads it leaves unreferenced", async () => {
      const store = await make();
      const thread = { threadId: randomUUID(), checkpointId: "c" };
      const old = response("a", { thread });
      await store.saveResponse(old);
      const record = conversation("a");
      await store.createConversation(record, [message("x")]);
      const sessionKey = randomUUID();
      await store.addSessionTurn(
        sessionKey,
        { scope: "a", model: "m" },
        { length: 2, hash: "h", thread: { threadId: "s", checkpointId: "c" } },
      );
      const future = new Date(Date.now() + 60_000);
      const dry = await store.purgeOlderThan(future, { dryRun: true });
      assert.ok(dry.responses >= 1 && dry.conversations >= 1 && dry.sessions >= 1, "a dry run counts");
      assert.ok(await store.getResponse("a", old.id), "a dry run deletes nothing");
      const past = await store.purgeOlderThan(new Date(Date.now() - 60_000));
      assert.equal(past.responses, 0, "nothing is older than a minute ago");
      const purged = await store.purgeOlderThan(future);
      assert.ok(purged.responses >= 1 && purged.conversations >= 1 && purged.sessions >= 1);
      const released = purged.threads.map((released) => released.threadId);
      assert.ok(released.includes(thread.threadId) && released.includes("s"), "the purged objects' threads are released");
      assert.equal(await store.getResponse("a", old.id), undefined);
      assert.equal(await store.getConversation("a", record.id), undefined);
      assert.deepEqual(await store.sessionTurns(sessionKey), []);
    });

    test("assistants: versions newest first, one made current again, per scope, deleted with its versions", async () => {
      const store = await make();
      const records = store.assistantRecords;
      const assistantId = randomUUID();
      const base = {
        assistant_id: assistantId,
        scope: "a",
        graph_id: "told",
        config: {},
        context: {},
        metadata: { team: "blue" },
        name: "v1",
        description: null,
        version: 1,
        created_at: "2026-12-01T00:00:00.000Z",
        updated_at: "2026-12-01T00:00:00.000Z",
      };
      await records.putVersion(base);
      await records.putVersion({ ...base, name: "v2", version: 2, updated_at: "2026-12-01T00:01:00.000Z" });
      assert.equal((await records.get("a", assistantId))?.name, "v2");
      assert.equal(await records.get("b", assistantId), undefined, "another scope's");
      assert.deepEqual(
        (await records.versions("a", assistantId)).map((version) => version.version),
        [2, 1],
      );
      const current = await records.setCurrent("a", assistantId, 1, "2026-12-01T00:02:00.000Z");
      assert.deepEqual(
        [current?.name, current?.version, current?.created_at, current?.updated_at],
        ["v1", 1, base.created_at, "2026-12-01T00:02:00.000Z"],
      );
      assert.equal(await records.setCurrent("a", assistantId, 7, "2026-12-01T00:03:00.000Z"), undefined);
      assert.deepEqual(
        (await records.list("a")).map((record) => record.assistant_id),
        [assistantId],
      );
      assert.equal(await records.delete("b", assistantId), false);
      assert.equal(await records.delete("a", assistantId), true);
      assert.deepEqual(await records.versions("a", assistantId), []);
      assert.deepEqual(await records.list("a"), []);
    });

    test("crons: per scope, replaced whole, the enabled ones of every scope listed for the timers, deleted", async () => {
      const store = await make();
      const records = store.cronRecords;
      const cron = {
        cron_id: randomUUID(),
        scope: "a",
        assistant_id: "told",
        thread_id: null,
        schedule: "0 9 * * *",
        timezone: "Europe/Paris",
        end_time: null,
        on_run_completed: "delete" as const,
        payload: { input: { messages: [] } },
        metadata: { team: "blue" },
        enabled: true,
        user_id: null,
        created_at: "2026-12-01T00:00:00.000Z",
        updated_at: "2026-12-01T00:00:00.000Z",
      };
      const other = { ...cron, cron_id: randomUUID(), scope: "b", enabled: false };
      await records.put(cron);
      await records.put(other);
      assert.deepEqual(await records.get("a", cron.cron_id), cron);
      assert.equal(await records.get("b", cron.cron_id), undefined, "another scope's");
      const enabled = (await records.enabled()).map((record) => record.cron_id);
      assert.ok(enabled.includes(cron.cron_id) && !enabled.includes(other.cron_id));
      await records.put({ ...cron, enabled: false, schedule: "0 10 * * *" });
      assert.equal((await records.get("a", cron.cron_id))?.schedule, "0 10 * * *");
      assert.ok(!(await records.enabled()).some((record) => record.cron_id === cron.cron_id), "disabled: no timer");
      assert.deepEqual(
        (await records.list("b")).map((record) => record.cron_id),
        [other.cron_id],
      );
      // A firing is marked once: the second mark of the same time (another process's) is refused.
      assert.equal(await records.claimFiring("a", cron.cron_id, "2026-12-01T09:00:00.000Z"), true);
      assert.equal(await records.claimFiring("a", cron.cron_id, "2026-12-01T09:00:00.000Z"), false);
      assert.equal(await records.claimFiring("a", cron.cron_id, "2026-12-01T10:00:00.000Z"), true);
      assert.equal(await records.claimFiring("b", cron.cron_id, "2026-12-01T11:00:00.000Z"), false, "another scope's");
      assert.equal(await records.delete("b", cron.cron_id), false);
      assert.equal(await records.delete("a", cron.cron_id), true);
      assert.deepEqual(await records.list("a"), []);
    });
  });
}

describe("the memory store is bounded", () => {
  test("past its cap the least recently used go first, and their threads are released at the next purge", async () => {
    const store = new MemoryConversationStore({ maxResponses: 3, maxConversations: 2, maxSessions: 2, maxItemsPerConversation: 3 });
    const saved: ResponseRecord[] = [];
    for (let index = 0; index < 5; index += 1) {
      const record = response("a", { thread: { threadId: `t${index}`, checkpointId: "c" } });
      saved.push(record);
      await store.saveResponse(record);
    }
    assert.equal(store.size.responses, 3);
    assert.equal(await store.getResponse("a", saved[0]!.id), undefined, "the oldest went first");
    assert.ok(await store.getResponse("a", saved[4]!.id));
    const conversations = [conversation("a"), conversation("a"), conversation("a")];
    await store.createConversation(conversations[0]!, []);
    await store.createConversation(conversations[1]!, []);
    await store.addItems("a", conversations[0]!.id, [message("1"), message("2"), message("3"), message("4")]);
    await store.createConversation(conversations[2]!, []);
    assert.ok(await store.getConversation("a", conversations[0]!.id), "a used conversation is kept");
    assert.equal(await store.getConversation("a", conversations[1]!.id), undefined);
    assert.deepEqual(texts((await store.itemsSince("a", conversations[0]!.id, 0))!.items), ["2", "3", "4"], "items are capped too");
    const purge = await store.purgeOlderThan(new Date(0));
    assert.deepEqual(purge.threads.map((thread) => thread.threadId).sort(), ["t0", "t1"]);
  });
});
