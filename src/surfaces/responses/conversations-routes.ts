import type { FastifyRequest } from "fastify";
import { z } from "zod";
import { parseItems, storedId } from "../../dialects/responses/parse-responses-request.js";
import { storeCall } from "../../dialects/responses/stored-context.js";
import { toStoredItems } from "../../dialects/responses/stored-items.js";
import { InvalidRequestError, StoredObjectNotFoundError, UnknownParameterError } from "../../errors/catalogue.js";
import type { RouteTable } from "../../http/lazy-routes.js";
import { type RunRouteOptions, requestScope } from "../../http/run-request.js";
import { type ConversationRecord, UnknownCursorError } from "../../store/conversation-store.js";
import { describeFirstIssue, firstIssue, issuePath } from "../../util/describe-issue.js";
import { randomHex } from "../../util/random-hex.js";
import { metadataSchema } from "../../wire/request.js";
import { listBody, pageQuery, releaseThreads } from "./stored-objects.js";

// At most this many items per create or add request, as at OpenAI.
const MAX_ITEMS_PER_REQUEST = 20;

const createSchema = z.strictObject({
  items: z.array(z.unknown()).max(MAX_ITEMS_PER_REQUEST, `holds at most ${MAX_ITEMS_PER_REQUEST} items`).nullish(),
  metadata: metadataSchema.nullish(),
});
const updateSchema = z.strictObject({ metadata: metadataSchema.nullable() });
const addItemsSchema = z.strictObject({
  items: z
    .array(z.unknown())
    .min(1, "must hold at least one item")
    .max(MAX_ITEMS_PER_REQUEST, `holds at most ${MAX_ITEMS_PER_REQUEST} items`),
});

function parseBody<T extends z.ZodType>(schema: T, raw: unknown): z.output<T> {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    throw new InvalidRequestError("The request body must be a JSON object.");
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  const issue = firstIssue(result.error);
  if (issue?.code === "unrecognized_keys" && issue.path.length === 0) throw new UnknownParameterError(String(issue.keys[0]));
  throw new InvalidRequestError(`Invalid request: ${describeFirstIssue(result.error)}`, {
    param: issue === undefined ? null : issuePath(issue.path) || null,
  });
}

/** A conversation in the OpenAI shape. */
function conversationBody(record: ConversationRecord) {
  return {
    id: record.id,
    object: "conversation" as const,
    created_at: Math.floor(record.createdAt.getTime() / 1000),
    metadata: record.metadata,
  };
}

function newConversationId(): string {
  return `conv_${randomHex(48)}`;
}

/**
 * The Conversations API: a conversation groups the turns of responses that name it (their
 * input and output items are appended to it), and its items can be listed, added and
 * deleted. On a stateful graph a conversation is a thread: items added here reach the graph
 * with the next turn. Every object belongs to the scope that made it.
 */
export function addConversationRoutes(routes: RouteTable, options: RunRouteOptions): void {
  const { store } = options.registry;
  const call = <T>(operation: () => Promise<T>) => storeCall(options.backendTimeoutMs, operation);
  const conversationId = (request: FastifyRequest) => storedId((request.params as { id: string }).id, "conv", "conversation_id");
  const scopeOf = (request: FastifyRequest) => requestScope(request, options.checkpointScope);

  routes.post("/conversations", async (request) => {
    const body = parseBody(createSchema, request.body ?? {});
    const items = toStoredItems(parseItems(body.items ?? [], "items"));
    const record: ConversationRecord = {
      id: newConversationId(),
      scope: await scopeOf(request),
      createdAt: new Date(Math.floor(Date.now() / 1000) * 1000),
      metadata: body.metadata ?? {},
      threadPosition: 0,
    };
    await call(() => store.createConversation(record, items));
    return conversationBody(record);
  });

  routes.get("/conversations/:id", async (request) => {
    const id = conversationId(request);
    const scope = await scopeOf(request);
    const record = await call(() => store.getConversation(scope, id));
    if (record === undefined) throw new StoredObjectNotFoundError("conversation", id);
    return conversationBody(record);
  });

  routes.post("/conversations/:id", async (request) => {
    const id = conversationId(request);
    const body = parseBody(updateSchema, request.body);
    const scope = await scopeOf(request);
    const record = await call(() => store.updateConversation(scope, id, body.metadata ?? {}));
    if (record === undefined) throw new StoredObjectNotFoundError("conversation", id);
    return conversationBody(record);
  });

  routes.delete("/conversations/:id", async (request) => {
    const id = conversationId(request);
    const scope = await scopeOf(request);
    const deleted = await call(() => store.deleteConversation(scope, id));
    if (deleted === undefined) throw new StoredObjectNotFoundError("conversation", id);
    await releaseThreads(options, deleted.released, request.log);
    return { id, object: "conversation.deleted" as const, deleted: true };
  });

  routes.get("/conversations/:id/items", async (request) => {
    const id = conversationId(request);
    const page = pageQuery(request.query);
    const scope = await scopeOf(request);
    let result: Awaited<ReturnType<typeof store.listItems>>;
    try {
      result = await call(() => store.listItems(scope, id, page));
    } catch (error) {
      if (!(error instanceof UnknownCursorError)) throw error;
      throw new InvalidRequestError(`after: no item of this conversation has the id '${page.after!.slice(0, 80)}'.`, { param: "after" });
    }
    if (result === undefined) throw new StoredObjectNotFoundError("conversation", id);
    return listBody(result.items, result.hasMore);
  });

  routes.post("/conversations/:id/items", async (request) => {
    const id = conversationId(request);
    const body = parseBody(addItemsSchema, request.body);
    const items = toStoredItems(parseItems(body.items, "items"));
    const scope = await scopeOf(request);
    if (!(await call(() => store.addItems(scope, id, items)))) throw new StoredObjectNotFoundError("conversation", id);
    return listBody(items, false);
  });

  const itemParams = (request: FastifyRequest) => {
    const { item_id: itemId } = request.params as { item_id: string };
    if (!/^[A-Za-z0-9_-]{1,128}$/u.test(itemId)) {
      throw new InvalidRequestError(`item_id must be an item id; got ${JSON.stringify(itemId.slice(0, 80))}.`, { param: "item_id" });
    }
    return { id: conversationId(request), itemId };
  };

  routes.get("/conversations/:id/items/:item_id", async (request) => {
    const { id, itemId } = itemParams(request);
    const scope = await scopeOf(request);
    if ((await call(() => store.getConversation(scope, id))) === undefined) throw new StoredObjectNotFoundError("conversation", id);
    const item = await call(() => store.getItem(scope, id, itemId));
    if (item === undefined) throw new StoredObjectNotFoundError("item", itemId);
    return item;
  });

  routes.delete("/conversations/:id/items/:item_id", async (request) => {
    const { id, itemId } = itemParams(request);
    const scope = await scopeOf(request);
    if ((await call(() => store.getConversation(scope, id))) === undefined) throw new StoredObjectNotFoundError("conversation", id);
    if (!(await call(() => store.deleteItem(scope, id, itemId)))) throw new StoredObjectNotFoundError("item", itemId);
    const record = await call(() => store.getConversation(scope, id));
    if (record === undefined) throw new StoredObjectNotFoundError("conversation", id);
    return conversationBody(record);
  });
}
