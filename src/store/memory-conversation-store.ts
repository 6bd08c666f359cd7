import {
  type ConversationRecord,
  type ConversationStore,
  type ItemPage,
  type ItemPageResult,
  type PurgeResult,
  type ReleasedThread,
  type ResponseRecord,
  type SessionTurn,
  type StoredItem,
  type ThreadPoint,
  UnknownCursorError,
} from "./conversation-store.js";

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

const copy = <T>(value: T): T => structuredClone(value);

/**
 * The embedded store: in this process's memory, gone at restart, and bounded by count (see
 * `MemoryStoreLimits`) as well as by the server's `expireAfter`. What an eviction leaves
 * unreferenced is handed to the next purge, so its checkpoints are deleted too.
 */
export class MemoryConversationStore implements ConversationStore {
  readonly durable = false;
  readonly #responses = new Map<string, ResponseRecord>();
  readonly #conversations = new Map<string, Conversation>();
  readonly #sessions = new Map<string, Session>();
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
  }

  async setup(): Promise<void> {}
  async check(): Promise<void> {}
  async close(): Promise<void> {}

  /** How many objects of each kind are kept right now. */
  get size(): { responses: number; conversations: number; sessions: number } {
    return { responses: this.#responses.size, conversations: this.#conversations.size, sessions: this.#sessions.size };
  }

  #referenced(threadId: string): boolean {
    for (const record of this.#responses.values()) if (record.thread?.threadId === threadId) return true;
    for (const { record } of this.#conversations.values()) if (record.thread?.threadId === threadId) return true;
    for (const session of this.#sessions.values()) if (session.turns.some((turn) => turn.thread.threadId === threadId)) return true;
    return false;
  }

  /** Of the threads given, those nothing refers to any more. */
  #released(threads: Iterable<ThreadPoint & { model: string }>): ReleasedThread[] {
    const seen = new Map<string, string>();
    for (const { threadId, model } of threads) seen.set(threadId, model);
    return [...seen].filter(([threadId]) => !this.#referenced(threadId)).map(([threadId, model]) => ({ threadId, model }));
  }

  /** Drops the oldest entries of a map over its cap, remembering the threads they leave behind. */
  #evict<T>(map: Map<string, T>, max: number, threadsOf: (value: T) => (ThreadPoint & { model: string })[]): void {
    const dropped: (ThreadPoint & { model: string })[] = [];
    while (map.size > max) {
      const [key, value] = map.entries().next().value as [string, T];
      map.delete(key);
      dropped.push(...threadsOf(value));
    }
    if (dropped.length === 0) return;
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

  async saveResponse(
    record: ResponseRecord,
    conversation?: { id: string; items: StoredItem[]; model: string; thread?: ThreadPoint; syncThread: boolean },
  ): Promise<boolean> {
    if (conversation !== undefined) {
      const target = this.#conversation(record.scope, conversation.id);
      if (target === undefined) return false;
      this.#append(target, conversation.items);
      target.record.model = conversation.model;
      if (conversation.thread !== undefined) target.record.thread = { ...conversation.thread };
      if (conversation.syncThread) target.record.threadPosition = target.nextPosition;
      this.#touch(target);
    }
    this.#responses.set(record.id, copy(record));
    this.#evict(this.#responses, this.#limits.maxResponses, (value) => (value.thread ? [{ ...value.thread, model: value.model }] : []));
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
    return { released: record.thread === undefined ? [] : this.#released([{ ...record.thread, model: record.model }]) };
  }

  async createConversation(record: ConversationRecord, items: StoredItem[]): Promise<void> {
    const conversation: Conversation = { record: copy(record), items: [], nextPosition: 1, usedAt: this.#now() };
    this.#append(conversation, items);
    this.#conversations.set(record.id, conversation);
    this.#evict(this.#conversations, this.#limits.maxConversations, ({ record: evicted }) =>
      evicted.thread && evicted.model ? [{ ...evicted.thread, model: evicted.model }] : [],
    );
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
    const { thread, model } = conversation.record;
    return { released: thread === undefined || model === undefined ? [] : this.#released([{ ...thread, model }]) };
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
    session.turns = session.turns.filter((existing) => existing.hash !== turn.hash);
    session.turns.push(copy(turn));
    session.usedAt = this.#now();
    this.#sessions.delete(sessionKey);
    this.#sessions.set(sessionKey, session);
    this.#evict(this.#sessions, this.#limits.maxSessions, (evicted) =>
      evicted.turns.map((old) => ({ ...old.thread, model: evicted.owner.model })),
    );
  }

  async purgeOlderThan(cutoff: Date, options: { dryRun?: boolean } = {}): Promise<PurgeResult> {
    const responses = [...this.#responses.values()].filter((record) => record.createdAt < cutoff);
    const conversations = [...this.#conversations.values()].filter((conversation) => conversation.usedAt < cutoff);
    const sessions = [...this.#sessions].filter(([, session]) => session.usedAt < cutoff);
    const candidates = [
      ...responses.flatMap((record) => (record.thread ? [{ ...record.thread, model: record.model }] : [])),
      ...conversations.flatMap(({ record }) => (record.thread && record.model ? [{ ...record.thread, model: record.model }] : [])),
      ...sessions.flatMap(([, session]) => session.turns.map((turn) => ({ ...turn.thread, model: session.owner.model }))),
    ];
    const counts = { responses: responses.length, conversations: conversations.length, sessions: sessions.length };
    if (options.dryRun === true) return { ...counts, threads: [] };
    for (const record of responses) this.#responses.delete(record.id);
    for (const { record } of conversations) this.#conversations.delete(record.id);
    for (const [key] of sessions) this.#sessions.delete(key);
    const threads = [...this.#evicted, ...this.#released(candidates)];
    this.#evicted = [];
    return { ...counts, threads };
  }
}
