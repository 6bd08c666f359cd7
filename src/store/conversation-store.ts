import type { A2aTaskStore } from "./a2a-tasks.js";
import type { AgentRecords } from "./agent-records.js";
import type { AssistantRecords } from "./assistant-records.js";
import type { CronRecords } from "./cron-records.js";

/**
 * One item as the Responses and Conversations APIs show it (a message, a function call, its
 * output, a reasoning item), always with its `id`. The store keeps items as JSON.
 */
export type StoredItem = { id: string; type: string } & Record<string, unknown>;

/** Where a stateful graph's conversation stands: its LangGraph thread and the checkpoint a turn ended on. */
export interface ThreadPoint {
  threadId: string;
  checkpointId: string;
}

/** A stored response: the object as it was sent, the items it was given, and where it left its thread. */
export interface ResponseRecord {
  id: string;
  /** The server-trusted scope (tenant) that made it; another scope never sees it. */
  scope: string;
  model: string;
  createdAt: Date;
  /** The response object, as the client received it. */
  response: Record<string, unknown>;
  /** This request's input items, with ids (not those of earlier responses). */
  inputItems: StoredItem[];
  previousResponseId?: string;
  conversationId?: string;
  /** For a stateful graph: the thread, and the checkpoint this response ended on. */
  thread?: ThreadPoint;
}

/** A conversation of the Conversations API. */
export interface ConversationRecord {
  id: string;
  scope: string;
  createdAt: Date;
  metadata: Record<string, string>;
  /** Set by the first response in it: a conversation belongs to one model from then on. */
  model?: string;
  /** For a stateful graph: its thread, where the latest turn ended. */
  thread?: ThreadPoint;
  /** Items up to this position are in the thread; later ones (added through the items API) are not yet. */
  threadPosition: number;
  /** The instructions the thread's latest turn was given, so an unchanged repeat is not added again. */
  instructions?: string;
}

/** One turn of a chat-completions session on a stateful graph: the history it ended on and where. */
export interface SessionTurn {
  /** How many client-visible messages the history has, the answer included. */
  length: number;
  /** The hash of that history (see `historyHashes`). */
  hash: string;
  thread: ThreadPoint;
}

/** What a response in a conversation changes in it: its items, its model, and where its thread stands. */
export interface ConversationUpdate {
  id: string;
  items: StoredItem[];
  model: string;
  thread?: ThreadPoint;
  /** The thread has now seen every item: the thread position moves to the end. */
  syncThread: boolean;
  /** The instructions this turn was given (null: none). */
  instructions?: string | null;
}

/** What `listItems` reads: a page after an item, in an order. */
export interface ItemPage {
  after?: string;
  limit: number;
  order: "asc" | "desc";
}

export interface ItemPageResult {
  items: StoredItem[];
  hasMore: boolean;
}

/** A request made with an `Idempotency-Key`: its body's hash, and once it has ended, its answer. */
export interface IdempotencyRecord {
  bodyHash: string;
  /** The answer as it was sent (status, content type, body), once the first request has ended well. */
  result?: { status: number; contentType: string; body: string };
}

/** One stored response as an operator's list shows it. */
export interface ResponseSummary {
  id: string;
  scope: string;
  model: string;
  status: string;
  background: boolean;
  createdAt: Date;
}

/** A thread nothing refers to any more: its checkpoints can go. */
export interface ReleasedThread {
  threadId: string;
  model: string;
}

/** What a purge removed. */
export interface PurgeResult {
  responses: number;
  conversations: number;
  sessions: number;
  /** Threads that no remaining response, conversation or session refers to. */
  threads: ReleasedThread[];
}

/** An `after` cursor that names no item of the list. */
export class UnknownCursorError extends Error {}

/**
 * Where stored responses, conversations and the turns of chat sessions are kept, scoped to
 * the tenant that made them: every read and write names the scope, and an object of another
 * scope is not found. Writes that belong together happen together (a response with its items
 * and its conversation's new items; a conversation with its first items).
 */
export interface ConversationStore {
  /** Creates tables and the like; once, before serving. */
  setup(): Promise<void>;
  /** Throws when the store cannot be reached (used by `/ready`). */
  check(): Promise<void>;
  close(): Promise<void>;
  /** True when what is stored outlives the process (and is shared between processes). */
  readonly durable: boolean;
  /** The A2A tasks, whose turns are responses of this store. */
  readonly tasks: A2aTaskStore;
  /** The LangGraph Agent Protocol's threads and runs, kept where the rest of the store is. */
  readonly agentRecords: AgentRecords;
  /** The Agent Protocol's assistants clients make (each model's system assistant is not stored). */
  readonly assistantRecords: AssistantRecords;
  /** The Agent Protocol's crons. */
  readonly cronRecords: CronRecords;

  /**
   * Stores a response, or replaces the one stored under its id (a background response is
   * saved as it goes, then once more when it ends). With `conversation`, its input and output items are appended to that
   * conversation, which takes the model, thread and thread position given, in the same write.
   * Returns false (and writes nothing) when that conversation no longer exists.
   */
  saveResponse(record: ResponseRecord, conversation?: ConversationUpdate): Promise<boolean>;
  getResponse(scope: string, id: string): Promise<ResponseRecord | undefined>;
  /** Deletes a response; returns the thread it leaves unreferenced, if any, or undefined when not found. */
  deleteResponse(scope: string, id: string): Promise<{ released: ReleasedThread[] } | undefined>;

  createConversation(record: ConversationRecord, items: StoredItem[]): Promise<void>;
  getConversation(scope: string, id: string): Promise<ConversationRecord | undefined>;
  updateConversation(scope: string, id: string, metadata: Record<string, string>): Promise<ConversationRecord | undefined>;
  deleteConversation(scope: string, id: string): Promise<{ released: ReleasedThread[] } | undefined>;
  /** Appends items; false when the conversation does not exist. */
  addItems(scope: string, conversationId: string, items: StoredItem[]): Promise<boolean>;
  /** A page of items; undefined when the conversation does not exist; throws UnknownCursorError for a bad `after`. */
  listItems(scope: string, conversationId: string, page: ItemPage): Promise<ItemPageResult | undefined>;
  /** Every item, oldest first, from `fromPosition` on (0: all). Undefined when the conversation does not exist. */
  itemsSince(scope: string, conversationId: string, fromPosition: number): Promise<{ items: StoredItem[]; position: number } | undefined>;
  getItem(scope: string, conversationId: string, itemId: string): Promise<StoredItem | undefined>;
  /** Deletes one item; false when it (or the conversation) does not exist. */
  deleteItem(scope: string, conversationId: string, itemId: string): Promise<boolean>;

  /** The turns of a chat session on a stateful graph (by the session's thread key), longest history first. */
  sessionTurns(sessionKey: string): Promise<SessionTurn[]>;
  addSessionTurn(sessionKey: string, owner: { scope: string; model: string }, turn: SessionTurn): Promise<void>;

  /**
   * Claims an idempotency key for a request: undefined when this request now holds it (it
   * runs), or the record of the request that holds it (the caller replays its answer). Atomic:
   * of many concurrent claims, one wins.
   */
  claimIdempotencyKey(scope: string, key: string, bodyHash: string): Promise<IdempotencyRecord | undefined>;
  getIdempotencyKey(scope: string, key: string): Promise<IdempotencyRecord | undefined>;
  /** Keeps the answer of the request that held the key. */
  settleIdempotencyKey(scope: string, key: string, result: NonNullable<IdempotencyRecord["result"]>): Promise<void>;
  /** Lets the key go (its request failed): the next request with it runs. */
  releaseIdempotencyKey(scope: string, key: string): Promise<void>;

  /** Stored responses of every scope, newest first, for operators (`chat-serve responses list`). */
  listResponses(filter: { status?: string; limit: number }): Promise<ResponseSummary[]>;

  /**
   * Marks every background response still `queued` or `in_progress` as `failed`, with the
   * message given: at the start of a server whose background runs lived in the process that
   * stopped, so none reads `in_progress` forever. Returns how many.
   */
  failUnfinished(message: string): Promise<number>;

  /** Deletes what was last used before the cutoff, and says which threads nothing refers to any more. */
  purgeOlderThan(cutoff: Date, options?: { dryRun?: boolean }): Promise<PurgeResult>;
}

/** A stored response object marked failed with a message (what a restart does to an unfinished background run). */
export function failedResponse(response: Record<string, unknown>, message: string): void {
  response.status = "failed";
  response.error = { code: "server_error", message };
  response.completed_at = Math.floor(Date.now() / 1000);
}
