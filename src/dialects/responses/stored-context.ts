import { BackendUnavailableError, InvalidRequestError, StoredObjectNotFoundError } from "../../errors/catalogue.js";
import { isServeError } from "../../errors/serve-error.js";
import { type ThreadRequest, threadKey } from "../../runs/threads/run-thread.js";
import {
  type ConversationRecord,
  type ConversationStore,
  type ResponseRecord,
  type StoredItem,
  UnknownCursorError,
} from "../../store/conversation-store.js";
import { withDeadline } from "../../util/deadline.js";
import type { InputItem } from "../../wire/responses-request.js";
import type { ParsedResponsesRequest } from "./parse-responses-request.js";
import { historyItems } from "./stored-items.js";

/** The deadline of a call to this store: none for the in-memory store, which cannot hang. */
export function storeDeadline(store: ConversationStore, timeoutMs: number): number {
  return store.durable ? timeoutMs : Number.POSITIVE_INFINITY;
}

/** One store call under the deadline; any failure is `backend_unavailable`. */
export async function storeCall<T>(timeoutMs: number, operation: () => Promise<T>): Promise<T> {
  try {
    return await withDeadline("the response store", timeoutMs, operation());
  } catch (error) {
    // A refusal of the store's own (a page cursor naming no item) is the caller's to word.
    if (isServeError(error) || error instanceof UnknownCursorError) throw error;
    throw new BackendUnavailableError("The response store is unavailable; retry shortly.", { cause: error });
  }
}

// A chain longer than this is read only this far back (its oldest turns are dropped).
const MAX_CHAIN = 1_000;

/** What a Responses request continues, resolved from the store before the graph runs. */
export interface StoredContext {
  /** Items that come before the new input: a stateless graph's earlier turns, or what a stateful thread has not seen. */
  before: InputItem[];
  /** The thread of a stateful graph; absent: a fresh thread (or none) for this run. */
  thread?: ThreadRequest;
  conversation?: ConversationRecord;
  previous?: ResponseRecord;
  /** On a continued thread: the instructions its last turn was given, already in its state. */
  instructionsOnThread?: string;
}

/** The items of a stored chain, oldest first: each response's input items, then its output. */
async function chainItems(store: ConversationStore, scope: string, first: ResponseRecord, timeoutMs: number): Promise<StoredItem[]> {
  const records = [first];
  let cursor = first.previousResponseId;
  while (cursor !== undefined && records.length < MAX_CHAIN) {
    const id = cursor;
    const record = await storeCall(timeoutMs, () => store.getResponse(scope, id));
    // A deleted or expired link ends the chain there.
    if (record === undefined) break;
    records.push(record);
    cursor = record.previousResponseId;
  }
  return records.reverse().flatMap((record) => [...record.inputItems, ...((record.response.output as StoredItem[] | undefined) ?? [])]);
}

/**
 * Resolves `previous_response_id` and `conversation` for one request, in the caller's scope:
 * an id of another tenant, a deleted or expired one, is not found (404, the same answer as
 * for an id that never existed). A conversation belongs to the model of its first response.
 * For a stateful graph the request names a thread; for a stateless one, the earlier items.
 */
export async function resolveStoredContext(options: {
  store: ConversationStore;
  scope: string;
  parsed: ParsedResponsesRequest;
  stateful: boolean;
  /** The id the new response will have: a new stateful chain's thread is named after it. */
  responseId: string;
  timeoutMs: number;
}): Promise<StoredContext> {
  const { store, scope, parsed, stateful, responseId, timeoutMs } = options;
  const model = parsed.body.model;
  const store_ = parsed.body.store !== false;
  if (parsed.previousResponseId !== undefined) {
    const id = parsed.previousResponseId;
    const previous = await storeCall(timeoutMs, () => store.getResponse(scope, id));
    if (previous === undefined) throw new StoredObjectNotFoundError("response", id, "previous_response_id");
    if (stateful && previous.thread !== undefined) {
      if (previous.model !== model) {
        throw new InvalidRequestError(
          `Response '${id}' was made by model '${previous.model}', whose thread model '${model}' cannot continue; use '${previous.model}'.`,
          { param: "previous_response_id" },
        );
      }
      const instructions = previous.response.instructions;
      return {
        before: [],
        previous,
        thread: { kind: "continue", threadId: previous.thread.threadId, from: previous.thread.checkpointId },
        ...(typeof instructions === "string" ? { instructionsOnThread: instructions } : {}),
      };
    }
    return { before: historyItems(await chainItems(store, scope, previous, timeoutMs)), previous };
  }
  if (parsed.conversationId !== undefined) {
    const id = parsed.conversationId;
    const conversation = await storeCall(timeoutMs, () => store.getConversation(scope, id));
    if (conversation === undefined) throw new StoredObjectNotFoundError("conversation", id, "conversation");
    if (conversation.model !== undefined && conversation.model !== model) {
      throw new InvalidRequestError(`Conversation '${id}' belongs to model '${conversation.model}'; continue it with that model.`, {
        param: "conversation",
      });
    }
    // A stateful thread has seen the items up to its position; a stateless graph is given them all.
    const since = await storeCall(timeoutMs, () => store.itemsSince(scope, id, stateful ? conversation.threadPosition : 0));
    if (since === undefined) throw new StoredObjectNotFoundError("conversation", id, "conversation");
    const before = historyItems(since.items);
    if (!stateful) return { before, conversation };
    const thread = conversation.thread;
    return {
      before,
      conversation,
      ...(thread !== undefined && conversation.instructions !== undefined ? { instructionsOnThread: conversation.instructions } : {}),
      thread:
        thread === undefined
          ? { kind: "continue", threadId: threadKey(scope, model, `conversation:${id}`) }
          : { kind: "continue", threadId: thread.threadId, from: thread.checkpointId },
    };
  }
  // A new chain: stored, its thread is named after this response, so a later request continues it.
  if (stateful && store_) return { before: [], thread: { kind: "continue", threadId: threadKey(scope, model, `response:${responseId}`) } };
  return { before: [] };
}
