import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { MemorySaver } from "@langchain/langgraph";
import OpenAI from "openai";
import { assertMatchesItem, assertMatchesResponses } from "../helpers/openai-schema.js";
import { recallGraph, threadCount } from "../helpers/recall-graphs.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// Stored responses and the Conversations API through the real `openai` client: what is
// stored, retrieved, listed, continued and deleted, every bad id a clear 4xx, and every
// object of one tenant a 404 for another.

const KEY_A = "sk-tenant-a-0123456789";
const KEY_B = "sk-tenant-b-0123456789";
const statefulSaver = new MemorySaver();
const threads = threadCount;

let server: TestServer;
let client: OpenAI;
let other: OpenAI;
before(async () => {
  server = await startTestServer(
    {
      recall: { graph: recallGraph(), description: "Stateless", streamableNodeNames: ["chatbot"] },
      stateful: { graph: recallGraph(statefulSaver), description: "Stateful", streamableNodeNames: ["chatbot"] },
    },
    {
      auth: {
        keys: [
          { tenant: "a", key: KEY_A },
          { tenant: "b", key: KEY_B },
        ],
      },
    },
  );
  client = new OpenAI({ baseURL: server.baseURL, apiKey: KEY_A, maxRetries: 0 });
  other = new OpenAI({ baseURL: server.baseURL, apiKey: KEY_B, maxRetries: 0 });
});
after(() => server.close());

/** Asserts an OpenAI error: its status, code and param. */
async function rejects(promise: Promise<unknown>, status: number, code: string, param?: string | null): Promise<void> {
  await assert.rejects(promise, (error: InstanceType<typeof OpenAI.APIError>) => {
    assert.equal(error.status, status, `status of: ${error.message}`);
    assert.equal(error.code, code, `code of: ${error.message}`);
    if (param !== undefined) assert.equal(error.param, param, `param of: ${error.message}`);
    return true;
  });
}

/** A raw request, for what the SDK will not send. */
async function raw(method: string, path: string, body?: unknown, key = KEY_A) {
  const response = await fetch(`${server.baseURL}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return {
    status: response.status,
    body: (await response.json()) as { error?: { code: string; param: string | null; message: string } } & Record<string, unknown>,
  };
}

const textOf = (item: { type: string; content?: unknown }) =>
  item.type === "message" ? (item.content as { text?: string }[]).map((part) => part.text ?? "").join("") : item.type;

describe("stored responses", () => {
  test("store defaults to true: the response is retrieved as it was sent, valid against both schemas", async () => {
    const created = await client.responses.create({ model: "recall", input: "hello" });
    assert.equal((created as unknown as { store: boolean }).store, true);
    const retrieved = await client.responses.retrieve(created.id);
    assertMatchesResponses("Response", retrieved);
    assert.deepEqual(retrieved, created);
    const streamed = await client.responses.stream({ model: "recall", input: "streamed" }).finalResponse();
    assert.equal((await client.responses.retrieve(streamed.id)).output_text, "I remember: streamed");
  });

  test("input items are listed newest first by default, paginated with after and limit", async () => {
    const input = ["one", "two", "three", "four", "five"].map((text) => ({ role: "user" as const, content: text }));
    const created = await client.responses.create({ model: "recall", input });
    const all: string[] = [];
    for await (const item of client.responses.inputItems.list(created.id, { limit: 2 })) all.push(textOf(item));
    assert.deepEqual(all, ["five", "four", "three", "two", "one"]);
    const ascending = await client.responses.inputItems.list(created.id, { order: "asc", limit: 3 });
    assert.deepEqual(ascending.data.map(textOf), ["one", "two", "three"]);
    assert.equal(ascending.has_more, true);
    const rest = await client.responses.inputItems.list(created.id, { order: "asc", after: ascending.data.at(-1)!.id });
    assert.deepEqual(rest.data.map(textOf), ["four", "five"]);
    assert.equal(rest.has_more, false);
    for (const item of ascending.data) {
      assert.match(item.id!, /^msg_[0-9a-f]{32}$/u);
      assertMatchesItem(item);
    }
  });

  test("a deleted response is gone: retrieve, continue and delete again are 404", async () => {
    const created = await client.responses.create({ model: "recall", input: "forget me" });
    const deleted = await raw("DELETE", `/responses/${created.id}`);
    assert.deepEqual(deleted, { status: 200, body: { id: created.id, object: "response", deleted: true } });
    await rejects(client.responses.retrieve(created.id), 404, "not_found");
    await rejects(
      client.responses.create({ model: "recall", previous_response_id: created.id, input: "x" }),
      404,
      "not_found",
      "previous_response_id",
    );
    await rejects(client.responses.delete(created.id), 404, "not_found");
  });

  test("previous_response_id on a stateless graph: the stored chain's items come before the new input", async () => {
    const first = await client.responses.create({ model: "recall", input: "a" });
    const second = await client.responses.create({ model: "recall", previous_response_id: first.id, input: "b" });
    const third = await client.responses.create({ model: "recall", previous_response_id: second.id, input: "c" });
    assert.equal(third.output_text, "I remember: a | b | c");
  });

  test("function calls and their outputs are stored and listed as items", async () => {
    const input: OpenAI.Responses.ResponseInputItem[] = [
      { role: "system", content: "be kind" },
      { role: "user", content: [{ type: "input_text", text: "weather?" }] },
      { type: "function_call", call_id: "call_1", name: "get_weather", arguments: "{}" },
      { type: "function_call_output", call_id: "call_1", output: "sunny" },
      { role: "assistant", content: "It is sunny." },
      { role: "user", content: "thanks" },
    ];
    const created = await client.responses.create({ model: "recall", input });
    const items = await client.responses.inputItems.list(created.id, { order: "asc" });
    assert.deepEqual(
      items.data.map((item) => item.type),
      ["message", "message", "function_call", "function_call_output", "message", "message"],
    );
    for (const item of items.data) assertMatchesItem(item);
    const conversation = await client.conversations.create({ items: input });
    for (const item of (await client.conversations.items.list(conversation.id)).data) assertMatchesItem(item);
  });

  test("a response made with store: false is not stored and cannot be continued", async () => {
    const unstored = await client.responses.create({ model: "recall", input: "secret", store: false });
    assert.equal((unstored as unknown as { store: boolean }).store, false);
    await rejects(client.responses.retrieve(unstored.id), 404, "not_found");
    await rejects(
      client.responses.create({ model: "recall", previous_response_id: unstored.id, input: "x" }),
      404,
      "not_found",
      "previous_response_id",
    );
  });

  test("deleting the last response on a thread deletes the thread's checkpoints", async () => {
    const before = threads(statefulSaver);
    const first = await client.responses.create({ model: "stateful", input: "a" });
    const second = await client.responses.create({ model: "stateful", previous_response_id: first.id, input: "b" });
    assert.equal(threads(statefulSaver), before + 1, "one thread for the chain");
    await client.responses.delete(first.id);
    assert.equal(threads(statefulSaver), before + 1, "the second response still refers to it");
    const third = await client.responses.create({ model: "stateful", previous_response_id: second.id, input: "c" });
    assert.equal(third.output_text, "I remember: a | b | c");
    await client.responses.delete(second.id);
    await client.responses.delete(third.id);
    assert.equal(threads(statefulSaver), before, "nothing refers to the thread any more");
  });
});

describe("the Conversations API", () => {
  test("create, retrieve, update and delete a conversation", async () => {
    const created = await client.conversations.create({ metadata: { topic: "tea" }, items: [{ role: "user", content: "seeded" }] });
    assert.match(created.id, /^conv_[0-9a-f]{48}$/u);
    assert.equal(created.object, "conversation");
    assert.deepEqual(created.metadata, { topic: "tea" });
    assert.deepEqual(await client.conversations.retrieve(created.id), created);
    const updated = await client.conversations.update(created.id, { metadata: { topic: "coffee" } });
    assert.deepEqual(updated.metadata, { topic: "coffee" });
    const deleted = await client.conversations.delete(created.id);
    assert.deepEqual(deleted, { id: created.id, object: "conversation.deleted", deleted: true });
    await rejects(client.conversations.retrieve(created.id), 404, "not_found");
    await rejects(client.conversations.items.list(created.id), 404, "not_found");
  });

  test("items: list, add, retrieve and delete", async () => {
    const conversation = await client.conversations.create({ items: [{ role: "user", content: "first" }] });
    const added = await client.conversations.items.create(conversation.id, {
      items: [
        { role: "user", content: "second" },
        { role: "assistant", content: "third" },
      ],
    });
    assert.deepEqual(added.data.map(textOf), ["second", "third"]);
    const listed = await client.conversations.items.list(conversation.id);
    assert.deepEqual(listed.data.map(textOf), ["third", "second", "first"], "newest first by default");
    const item = await client.conversations.items.retrieve(added.data[0]!.id!, { conversation_id: conversation.id });
    assert.equal(textOf(item), "second");
    const after = await client.conversations.items.delete(added.data[0]!.id!, { conversation_id: conversation.id });
    assert.equal(after.id, conversation.id);
    const remaining = await client.conversations.items.list(conversation.id, { order: "asc" });
    assert.deepEqual(remaining.data.map(textOf), ["first", "third"]);
    await rejects(client.conversations.items.retrieve(added.data[0]!.id!, { conversation_id: conversation.id }), 404, "not_found");
  });

  test("responses in a conversation: a stateless graph is given its items, and each turn's items are appended", async () => {
    const conversation = await client.conversations.create({ items: [{ role: "user", content: "seeded" }] });
    await client.responses.create({ model: "recall", conversation: conversation.id, input: "one" });
    const second = await client.responses.create({ model: "recall", conversation: { id: conversation.id }, input: "two" });
    assert.equal(second.output_text, "I remember: seeded | one | two");
    const items = await client.conversations.items.list(conversation.id, { order: "asc" });
    assert.deepEqual(items.data.map(textOf), ["seeded", "one", "I remember: seeded | one", "two", "I remember: seeded | one | two"]);
    for (const item of items.data) assertMatchesItem(item);
  });

  test("a stateful conversation: items added between turns reach the graph with the next turn, once", async () => {
    const conversation = await client.conversations.create({ items: [{ role: "user", content: "seeded" }] });
    await client.responses.create({ model: "stateful", conversation: conversation.id, input: "one" });
    await client.conversations.items.create(conversation.id, { items: [{ role: "user", content: "added" }] });
    const second = await client.responses.create({ model: "stateful", conversation: conversation.id, input: "two" });
    assert.equal(second.output_text, "I remember: seeded | one | added | two");
    const third = await client.responses.create({ model: "stateful", conversation: conversation.id, input: "three" });
    assert.equal(third.output_text, "I remember: seeded | one | added | two | three");
  });

  test("deleting a stateful conversation and its responses deletes its thread's checkpoints", async () => {
    const before = threads(statefulSaver);
    const conversation = await client.conversations.create({});
    const turn = await client.responses.create({ model: "stateful", conversation: conversation.id, input: "a" });
    assert.equal(threads(statefulSaver), before + 1);
    await client.conversations.delete(conversation.id);
    assert.equal(threads(statefulSaver), before + 1, "its response still refers to the thread");
    await client.responses.delete(turn.id);
    assert.equal(threads(statefulSaver), before, "nothing refers to it any more");
  });

  test("a conversation belongs to the model of its first response", async () => {
    const conversation = await client.conversations.create({});
    await client.responses.create({ model: "recall", conversation: conversation.id, input: "one" });
    await rejects(
      client.responses.create({ model: "stateful", conversation: conversation.id, input: "two" }),
      400,
      "invalid_value",
      "conversation",
    );
  });
});

describe("bad input is a clear 4xx naming the param, before any graph runs", () => {
  test("malformed ids, ids of another kind, and both continuations at once", async () => {
    const conversation = await client.conversations.create({});
    let result = await raw("GET", "/responses/not-an-id");
    assert.equal(result.status, 400);
    assert.equal(result.body.error?.param, "response_id");
    result = await raw("GET", `/responses/${conversation.id}`);
    assert.equal(result.status, 400);
    assert.match(result.body.error!.message, /must be a response id \(resp_…\)/u);
    result = await raw("GET", "/conversations/resp_0123456789abcdef");
    assert.equal(result.status, 400);
    assert.equal(result.body.error?.param, "conversation_id");
    await rejects(
      client.responses.create({ model: "recall", previous_response_id: conversation.id, input: "x" }),
      400,
      "invalid_value",
      "previous_response_id",
    );
    await rejects(
      client.responses.create({ model: "recall", conversation: "resp_0123", input: "x" }),
      400,
      "invalid_value",
      "conversation",
    );
    const first = await client.responses.create({ model: "recall", input: "a" });
    await rejects(
      client.responses.create({ model: "recall", previous_response_id: first.id, conversation: conversation.id, input: "x" }),
      400,
      "invalid_value",
      "conversation",
    );
    await rejects(
      client.responses.create({ model: "recall", conversation: "conv_0000000000000000", input: "x" }),
      404,
      "not_found",
      "conversation",
    );
  });

  test("paging: after naming no item, limit outside 1-100, an unknown query parameter", async () => {
    const created = await client.responses.create({ model: "recall", input: "a" });
    const conversation = await client.conversations.create({});
    for (const path of [`/responses/${created.id}/input_items`, `/conversations/${conversation.id}/items`]) {
      let result = await raw("GET", `${path}?after=msg_nothing`);
      assert.deepEqual([result.status, result.body.error?.param], [400, "after"], path);
      for (const limit of ["0", "101", "ten"]) {
        result = await raw("GET", `${path}?limit=${limit}`);
        assert.deepEqual([result.status, result.body.error?.param], [400, "limit"], `${path} limit=${limit}`);
      }
      result = await raw("GET", `${path}?order=sideways`);
      assert.deepEqual([result.status, result.body.error?.param], [400, "order"], path);
      result = await raw("GET", `${path}?colour=blue`);
      assert.deepEqual([result.status, result.body.error?.code], [400, "unknown_parameter"], path);
    }
  });

  test("bodies of the Conversations API are checked", async () => {
    const conversation = await client.conversations.create({});
    let result = await raw("POST", "/conversations", { items: [{ role: "wizard", content: "x" }] });
    assert.deepEqual([result.status, result.body.error?.param], [400, "items.0.role"]);
    result = await raw("POST", "/conversations", { colour: "blue" });
    assert.deepEqual([result.status, result.body.error?.code], [400, "unknown_parameter"]);
    result = await raw("POST", `/conversations/${conversation.id}/items`, { items: [] });
    assert.deepEqual([result.status, result.body.error?.param], [400, "items"]);
    result = await raw("POST", `/conversations/${conversation.id}`, {});
    assert.deepEqual([result.status, result.body.error?.param], [400, "metadata"]);
    result = await raw("PUT", `/conversations/${conversation.id}`, {});
    assert.equal(result.status, 405);
  });
});

describe("tenancy: another tenant's ids are 404 on every endpoint", () => {
  test("tenant B never reaches what tenant A made", async () => {
    const response = await client.responses.create({ model: "recall", input: "a's secret" });
    const conversation = await client.conversations.create({ items: [{ role: "user", content: "a's item" }] });
    const item = (await client.conversations.items.list(conversation.id)).data[0]!;
    await rejects(other.responses.retrieve(response.id), 404, "not_found");
    await rejects(other.responses.inputItems.list(response.id), 404, "not_found");
    await rejects(other.responses.delete(response.id), 404, "not_found");
    await rejects(
      other.responses.create({ model: "recall", previous_response_id: response.id, input: "x" }),
      404,
      "not_found",
      "previous_response_id",
    );
    await rejects(other.responses.create({ model: "recall", conversation: conversation.id, input: "x" }), 404, "not_found", "conversation");
    await rejects(other.conversations.retrieve(conversation.id), 404, "not_found");
    await rejects(other.conversations.update(conversation.id, { metadata: {} }), 404, "not_found");
    await rejects(other.conversations.items.list(conversation.id), 404, "not_found");
    await rejects(other.conversations.items.create(conversation.id, { items: [{ role: "user", content: "x" }] }), 404, "not_found");
    await rejects(other.conversations.items.retrieve(item.id!, { conversation_id: conversation.id }), 404, "not_found");
    await rejects(other.conversations.items.delete(item.id!, { conversation_id: conversation.id }), 404, "not_found");
    await rejects(other.conversations.delete(conversation.id), 404, "not_found");
    // Still there for A.
    assert.equal((await client.responses.retrieve(response.id)).output_text, "I remember: a's secret");
    assert.equal((await client.conversations.items.list(conversation.id)).data.length, 1);
  });
});
