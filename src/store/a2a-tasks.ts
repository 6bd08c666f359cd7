import { FairMap } from "../util/fair-share.js";

/** An A2A task: its turns are stored responses; this record says which is the latest. */
export interface TaskRecord {
  id: string;
  /** The server-trusted scope (tenant) that made it; another scope never sees it. */
  scope: string;
  model: string;
  contextId: string;
  /** The stored response of the task's latest turn. */
  responseId: string;
  /** Cancelled while it waited for input (no run was left to cancel). */
  canceled: boolean;
  /** The client's messages to the task, as A2A JSON, oldest first. */
  history: Record<string, unknown>[];
  createdAt: Date;
  updatedAt: Date;
}

/** What moving a task on changes. */
export interface TaskAdvance {
  responseId?: string;
  canceled?: boolean;
  /** A message of the client's, added to the history. */
  message?: Record<string, unknown>;
}

/** Where A2A tasks are kept, beside the responses their turns are (see `ConversationStore.tasks`). */
export interface A2aTaskStore {
  create(record: TaskRecord): Promise<void>;
  get(scope: string, id: string): Promise<TaskRecord | undefined>;
  /**
   * Moves a task on, only while its latest turn is still `from`: false (and nothing written)
   * when another request moved it first, so two answers to one question never both run.
   */
  advance(scope: string, id: string, from: string, update: TaskAdvance): Promise<boolean>;
  /** The tasks of a context, the most recently moved first. */
  inContext(scope: string, contextId: string, limit: number): Promise<TaskRecord[]>;
}

/** The tasks in this process's memory: at most `max`, the least recently moved of the tenant holding the most going first. */
export class MemoryA2aTasks implements A2aTaskStore {
  readonly #tasks = new FairMap<TaskRecord>((record) => record.scope);

  constructor(
    readonly max = 10_000,
    readonly now: () => Date = () => new Date(),
  ) {}

  #put(record: TaskRecord): void {
    this.#tasks.set(record.id, structuredClone(record));
    this.#tasks.evictOver(this.max);
  }

  async create(record: TaskRecord): Promise<void> {
    this.#put(record);
  }

  async get(scope: string, id: string): Promise<TaskRecord | undefined> {
    const record = this.#tasks.get(id);
    return record?.scope === scope ? structuredClone(record) : undefined;
  }

  async advance(scope: string, id: string, from: string, update: TaskAdvance): Promise<boolean> {
    const record = this.#tasks.get(id);
    if (record?.scope !== scope || record.responseId !== from) return false;
    this.#put({
      ...record,
      responseId: update.responseId ?? record.responseId,
      canceled: update.canceled ?? record.canceled,
      history: update.message === undefined ? record.history : [...record.history, update.message],
      updatedAt: this.now(),
    });
    return true;
  }

  async inContext(scope: string, contextId: string, limit: number): Promise<TaskRecord[]> {
    return [...this.#tasks.values()]
      .filter((record) => record.scope === scope && record.contextId === contextId)
      .sort((a, b) => b.updatedAt.getTime() - a.updatedAt.getTime())
      .slice(0, limit)
      .map((record) => structuredClone(record));
  }

  /** Forgets the tasks last moved before the cutoff; how many. */
  purge(cutoff: Date, dryRun: boolean): number {
    const old = [...this.#tasks.values()].filter((record) => record.updatedAt < cutoff);
    if (!dryRun) for (const record of old) this.#tasks.delete(record.id);
    return old.length;
  }
}
