import { copyData } from "../util/copy-data.js";
import { FairMap } from "../util/fair-share.js";
import { MemoryA2aTasks } from "./a2a-tasks.js";
import { MemoryAgentRecords } from "./agent-records.js";
import { MemoryAssistantRecords } from "./assistant-records.js";
import {
  type ConversationRecord,
  type ConversationStore,
  type ConversationUpdate,
  failedResponse,
  type IdempotencyRecord,
  type ItemPage,
  type ItemPageResult,
  type PurgeResult,
  type ReleasedThread,
  type ResponseRecord,
  type ResponseSummary,
  type SessionTurn,
  type StoredItem,
  type ThreadPoint,
  UnknownCursorError,
} from "./conversation-store.js";
import { MemoryCronRecords } from "./cron-records.js";

/** How much the in-memory store keeps: each kind is capped, the least recently used going first. */
export interface MemoryStoreLimits {
  /** Stored responses kept (default 10,000). */
  maxResponses?: number;
  /** Conversations kept (default 1,000), each with at most `maxItemsPerConversation` items (default 10,000). */
  maxConversations?: number;
  maxItemsPerConversation?: number;
  /** Chat sessions on stateful graphs kept (default 1,000). */
  maxSessions?: number;
}

interface Conversation {
  record: ConversationRecord;
  items: { position: number; item: StoredItem }[];
  nextPosition: number;
  usedAt: Date;
}

interface Session {
  owner: { scope: string; model: string };
  turns: SessionTurn[];
  usedAt: Date;
}

// Callers never share the records the store holds: every write and every read is a copy.
const copy = copyData;

const UNFINISHED = new Set(["queued", "in_progress"]);

/**
 * The embedded store: in this process's memory, gone at restart, and bounded by count (see
 * `MemoryStoreLimits`) as well as by the server's `expireAfter`. What an eviction leaves
 * unreferenced is handed to the next purge, so its checkpoints are deleted too.
 */
export class MemoryConversationStore implements ConversationStore {
  readonly durable = false;
  // Each bounded by tenant-fair eviction: past a cap, the tenant holding the most loses its oldest.
  readonly #responses = new FairMap<ResponseRecord>((record) => record.scope);
  readonly #conversations = new FairMap<Conversation>((conversation) => conversation.record.scope);
  readonly #sessions = new FairMap<Session>((session) => session.owner.scope);
  readonly #idempotency = new Map<string, IdempotencyRecord & { createdAt: Date }>();
  readonly tasks: MemoryA2aTasks;
  readonly agentRecords = new MemoryAgentRecords();
  readonly assistantRecords = new MemoryAssistantRecords();
  readonly cronRecords = new MemoryCronRecords();
  /** Threads left unreferenced by an eviction, for the next purge to report (when no `onEvict` takes them). */
  #evicted: ReleasedThread[] = [];
  /** Deletes the threads an eviction leaves unreferenced, at once; set by the registry that owns the checkpointers. */
  onEvict: ((threads: ReleasedThread[]) => void) | undefined;
  readonly #limits: Required<MemoryStoreLimits>;
  readonly #now: () => Date;

  constructor(limits: MemoryStoreLimits = {}, now: () => Date = () => new Date()) {
    this.#limits = {
      maxResponses: limits.maxResponses ?? 10_000,
      maxConversations: limits.maxConversations ?? 1_000,
      maxItemsPerConversation: limits.maxItemsPerConversation ?? 10_000,
      maxSessions: limits.maxSessions ?? 1_000,
    };
    this.#now = now;
    this.tasks = new MemoryA2aTasks(this.#limits.maxResponses, now);
  }

  async setup(): Promise<void> {}
  async check(): Promise<void> {}
  async close(): Promise<void> {}

  /** How many objects of each kind are kept right now. */
  get size(): { responses: number; conversations: number; sessions: number } {
    return { responses: this.#responses.size, conversations: this.#conversations.size, sessions: this.#sessions.size };
  }

  /** How many responses, conversations and session turns refer to each thread. */
  readonly #refs = new Map<string, number>();

  #ref(threads: readonly { threadId: string }[], by: 1 | -1): void {
    for (const { threadId } of threads) {
      const count = (this.#refs.get(threadId) ?? 0) + by;
      if (count > 0) this.#refs.set(threadId, count);
      else this.#refs.delete(threadId);
    }
  }

  #referenced(threadId: string): boolean {
    return this.#refs.has(threadId);
  }

  static #responseThreads(record: ResponseRecord): (ThreadPoint & { model: string })[] {
    return record.thread === undefined ? [] : [{ ...record.thread, model: record.model }];
  }

  static #conversationThreads({ record }: Conversation): (ThreadPoint & { model: string })[] {
    return record.thread === undefined || record.model === undefined ? [] : [{ ...record.thread, model: record.model }];
  }

  static #sessionThreads(session: Session): (ThreadPoint & { model: string })[] {
    return session.turns.map((turn) => ({ ...turn.thread, model: session.owner.model }));
  }

  /** Of the threads given, those nothing refers to any more. */
  #released(threads: Iterable<ThreadPoint & { model: string }>): ReleasedThread[] {
    const seen = new Map<string, string>();
    for (const { threadId, model } of threads) seen.set(threadId, model);
    return [...seen].filter(([threadId]) => !this.#referenced(threadId)).map(([threadId, model]) => ({ threadId, model }));
  }

  /** Drops entries of a map over its cap (the largest tenant's oldest), remembering the threads they leave behind. */
  #evict<T>(map: FairMap<T>, max: number, threadsOf: (value: T) => (ThreadPoint & { model: string })[]): void {
    const dropped = map.evictOver(max).flatMap(([, value]) => threadsOf(value));
    if (dropped.length === 0) return;
    this.#ref(dropped, -1);
    const released = this.#released(dropped);
    if (this.onEvict === undefined) this.#evicted.push(...released);
    else if (released.length > 0) this.onEvict(released);
  }

  #owned<T extends { scope: string }>(value: T | undefined, scope: string): T | undefined {
    return value !== undefined && value.scope === scope ? value : undefined;
  }

  #conversation(scope: string, id: string): Conversation | undefined {
    const conversation = this.#conversations.get(id);
    return conversation !== undefined && conversation.record.scope === scope ? conversation : undefined;
  }

  #touch(conversation: Conversation): void {
    conversation.usedAt = this.#now();
    // Map order is the eviction order: most recently used last.
    this.#conversations.delete(conversation.record.id);
    this.#conversations.set(conversation.record.id, conversation);
  }

  #append(conversation: Conversation, items: StoredItem[]): void {
    for (const item of items) conversation.items.push({ position: conversation.nextPosition++, item: copy(item) });
    const excess = conversation.items.length - this.#limits.maxItemsPerConversation;
    if (excess > 0) conversation.items.splice(0, excess);
  }

  async saveResponse(record: ResponseRecord, conversation?: ConversationUpdate): Promise<boolean> {
    if (conversation !== undefined) {
      const target = this.#conversation(record.scope, conversation.id);
      if (target === undefined) return false;
      this.#append(target, conversation.items);
      this.#ref(MemoryConversationStore.#conversationThreads(target), -1);
      target.record.model = conversation.model;
      if (conversation.thread !== undefined) target.record.thread = { ...conversation.thread };
      this.#ref(MemoryConversationStore.#conversationThreads(target), 1);
      if (conversation.syncThread) target.record.threadPosition = target.nextPosition;
      if (conversation.instructions === null) delete target.record.instructions;
      else if (conversation.instructions !== undefined) target.record.instructions = conversation.instructions;
      this.#touch(target);
    }
    const replaced = this.#responses.get(record.id);
    if (replaced !== undefined) this.#ref(MemoryConversationStore.#responseThreads(replaced), -1);
    this.#responses.set(record.id, copy(record));
    this.#ref(MemoryConversationStore.#responseThreads(record), 1);
    this.#evict(this.#responses, this.#limits.maxResponses, MemoryConversationStore.#responseThreads);
    return true;
  }

  async getResponse(scope: string, id: string): Promise<ResponseRecord | undefined> {
    const record = this.#owned(this.#responses.get(id), scope);
    return record === undefined ? undefined : copy(record);
  }

  async deleteResponse(scope: string, id: string): Promise<{ released: ReleasedThread[] } | undefined> {
    const record = this.#owned(this.#responses.get(id), scope);
    if (record === undefined) return undefined;
    this.#responses.delete(id);
    const threads = MemoryConversationStore.#responseThreads(record);
    this.#ref(threads, -1);
    return { released: this.#released(threads) };
  }

  async createConversation(record: ConversationRecord, items: StoredItem[]): Promise<void> {
    const conversation: Conversation = { record: copy(record), items: [], nextPosition: 1, usedAt: this.#now() };
    this.#append(conversation, items);
    this.#conversations.set(record.id, conversation);
    this.#evict(this.#conversations, this.#limits.maxConversations, MemoryConversationStore.#conversationThreads);
  }

  async getConversation(scope: string, id: string): Promise<ConversationRecord | undefined> {
    const conversation = this.#conversation(scope, id);
    return conversation === undefined ? undefined : copy(conversation.record);
  }

  async updateConversation(scope: string, id: string, metadata: Record<string, string>): Promise<ConversationRecord | undefined> {
    const conversation = this.#conversation(scope, id);
    if (conversation === undefined) return undefined;
    conversation.record.metadata = { ...metadata };
    this.#touch(conversation);
    return copy(conversation.record);
  }

  async deleteConversation(scope: string, id: string): Promise<{ released: ReleasedThread[] } | undefined> {
    const conversation = this.#conversation(scope, id);
    if (conversation === undefined) return undefined;
    this.#conversations.delete(id);
    const threads = MemoryConversationStore.#conversationThreads(conversation);
    this.#ref(threads, -1);
    return { released: this.#released(threads) };
  }

  async addItems(scope: string, conversationId: string, items: StoredItem[]): Promise<boolean> {
    const conversation = this.#conversation(scope, conversationId);
    if (conversation === undefined) return false;
    this.#append(conversation, items);
    this.#touch(conversation);
    return true;
  }

  async listItems(scope: string, conversationId: string, page: ItemPage): Promise<ItemPageResult | undefined> {
    const conversation = this.#conversation(scope, conversationId);
    if (conversation === undefined) return undefined;
    const ordered = page.order === "asc" ? conversation.items : [...conversation.items].reverse();
    let start = 0;
    if (page.after !== undefined) {
      const at = ordered.findIndex(({ item }) => item.id === page.after);
      if (at < 0) throw new UnknownCursorError(page.after);
      start = at + 1;
    }
    const slice = ordered.slice(start, start + page.limit + 1);
    return { items: slice.slice(0, page.limit).map(({ item }) => copy(item)), hasMore: slice.length > page.limit };
  }

  async itemsSince(
    scope: string,
    conversationId: string,
    fromPosition: number,
  ): Promise<{ items: StoredItem[]; position: number } | undefined> {
    const conversation = this.#conversation(scope, conversationId);
    if (conversation === undefined) return undefined;
    return {
      items: conversation.items.filter(({ position }) => position >= fromPosition).map(({ item }) => copy(item)),
      position: conversation.nextPosition,
    };
  }

  async getItem(scope: string, conversationId: string, itemId: string): Promise<StoredItem | undefined> {
    const found = this.#conversation(scope, conversationId)?.items.find(({ item }) => item.id === itemId);
    return found === undefined ? undefined : copy(found.item);
  }

  async deleteItem(scope: string, conversationId: string, itemId: string): Promise<boolean> {
    const conversation = this.#conversation(scope, conversationId);
    const at = conversation?.items.findIndex(({ item }) => item.id === itemId) ?? -1;
    if (conversation === undefined || at < 0) return false;
    conversation.items.splice(at, 1);
    this.#touch(conversation);
    return true;
  }

  async sessionTurns(sessionKey: string): Promise<SessionTurn[]> {
    const session = this.#sessions.get(sessionKey);
    return session === undefined ? [] : copy(session.turns).sort((a, b) => b.length - a.length);
  }

  async addSessionTurn(sessionKey: string, owner: { scope: string; model: string }, turn: SessionTurn): Promise<void> {
    const session = this.#sessions.get(sessionKey) ?? { owner, turns: [], usedAt: this.#now() };
    // One turn per history: a repeated history (a regenerate) points at its newest answer.
    const replaced = session.turns.filter((existing) => existing.hash === turn.hash);
    this.#ref(
      replaced.map((old) => old.thread),
      -1,
    );
    session.turns = session.turns.filter((existing) => existing.hash !== turn.hash);
    session.turns.push(copy(turn));
    this.#ref([turn.thread], 1);
    session.usedAt = this.#now();
    this.#sessions.delete(sessionKey);
    this.#sessions.set(sessionKey, session);
    this.#evict(this.#sessions, this.#limits.maxSessions, MemoryConversationStore.#sessionThreads);
  }

  async claimIdempotencyKey(scope: string, key: string, bodyHash: string): Promise<IdempotencyRecord | undefined> {
    const id = JSON.stringify([scope, key]);
    const existing = this.#idempotency.get(id);
    if (existing !== undefined)
      return copy({ bodyHash: existing.bodyHash, ...(existing.result === undefined ? {} : { result: existing.result }) });
    this.#idempotency.set(id, { bodyHash, createdAt: this.#now() });
    // Bounded like the responses.
    while (this.#idempotency.size > this.#limits.maxResponses) this.#idempotency.delete(this.#idempotency.keys().next().value as string);
    return undefined;
  }

  async getIdempotencyKey(scope: string, key: string): Promise<IdempotencyRecord | undefined> {
    const existing = this.#idempotency.get(JSON.stringify([scope, key]));
    return existing === undefined
      ? undefined
      : copy({ bodyHash: existing.bodyHash, ...(existing.result === undefined ? {} : { result: existing.result }) });
  }

  async settleIdempotencyKey(scope: string, key: string, result: NonNullable<IdempotencyRecord["result"]>): Promise<void> {
    const existing = this.#idempotency.get(JSON.stringify([scope, key]));
    if (existing !== undefined) existing.result = copy(result);
  }

  async releaseIdempotencyKey(scope: string, key: string): Promise<void> {
    this.#idempotency.delete(JSON.stringify([scope, key]));
  }

  async listResponses(filter: { status?: string; limit: number }): Promise<ResponseSummary[]> {
    return [...this.#responses.values()]
      .filter((record) => filter.status === undefined || record.response.status === filter.status)
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())
      .slice(0, filter.limit)
      .map((record) => ({
        id: record.id,
        scope: record.scope,
        model: record.model,
        status: String(record.response.status),
        background: record.response.background === true,
        createdAt: record.createdAt,
      }));
  }

  async failUnfinished(message: string): Promise<number> {
    let failed = 0;
    for (const record of this.#responses.values()) {
      if (!UNFINISHED.has(String(record.response.status))) continue;
      failedResponse(record.response, message);
      failed += 1;
    }
    return failed;
  }

  async purgeOlderThan(cutoff: Date, options: { dryRun?: boolean } = {}): Promise<PurgeResult> {
    const responses = [...this.#responses.values()].filter((record) => record.createdAt < cutoff);
    const conversations = [...this.#conversations.values()].filter((conversation) => conversation.usedAt < cutoff);
    const sessions = [...this.#sessions].filter(([, session]) => session.usedAt < cutoff);
    const candidates = [
      ...responses.flatMap(MemoryConversationStore.#responseThreads),
      ...conversations.flatMap(MemoryConversationStore.#conversationThreads),
      ...sessions.flatMap(([, session]) => MemoryConversationStore.#sessionThreads(session)),
    ];
    const counts = { responses: responses.length, conversations: conversations.length, sessions: sessions.length };
    if (options.dryRun === true) return { ...counts, threads: [] };
    for (const record of responses) this.#responses.delete(record.id);
    for (const { record } of conversations) this.#conversations.delete(record.id);
    for (const [key] of sessions) this.#sessions.delete(key);
    for (const [key, record] of this.#idempotency) if (record.createdAt < cutoff) this.#idempotency.delete(key);
    this.tasks.purge(cutoff, false);
    this.#ref(candidates, -1);
    const threads = this.#released([...this.#evicted.map((thread) => ({ ...thread, checkpointId: "" })), ...candidates]);
    this.#evicted = [];
    return { ...counts, threads };
  }
}
