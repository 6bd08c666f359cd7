import { copyData } from "../util/copy-data.js";

/** An assistant a client made on the Agent Protocol: a graph with its own config, context and metadata, in versions. */
export interface AssistantRecord {
  assistant_id: string;
  scope: string;
  graph_id: string;
  config: Record<string, unknown>;
  context: Record<string, unknown>;
  metadata: Record<string, unknown>;
  name: string;
  description: string | null;
  /** The version this record is (as a current assistant: the version runs use). */
  version: number;
  created_at: string;
  updated_at: string;
}

/**
 * Where the Agent Protocol keeps the assistants clients make, each with every version: the
 * current one (what a get and a run read) and the rest, newest first. Scoped to a tenant.
 */
export interface AssistantRecords {
  get(scope: string, assistantId: string): Promise<AssistantRecord | undefined>;
  /** Every current assistant of a scope (the surface filters, sorts and pages them). */
  list(scope: string): Promise<AssistantRecord[]>;
  /** Every version of an assistant, newest first; empty when there is none. */
  versions(scope: string, assistantId: string): Promise<AssistantRecord[]>;
  /** Records a new version and makes it current (the first version makes the assistant). */
  putVersion(record: AssistantRecord): Promise<void>;
  /** Makes a version current again; undefined when the assistant or the version is not there. */
  setCurrent(scope: string, assistantId: string, version: number, at: string): Promise<AssistantRecord | undefined>;
  /** Deletes an assistant with its versions; true when it existed. */
  delete(scope: string, assistantId: string): Promise<boolean>;
}

/** How many assistants the in-memory records keep, and versions of each. */
export const MEMORY_ASSISTANT_LIMITS = { assistants: 10_000, versionsEach: 100 };

const keyOf = (scope: string, id: string) => `${scope}\u0000${id}`;

/** The embedded assistants: in this process's memory, gone at restart, bounded by count. */
export class MemoryAssistantRecords implements AssistantRecords {
  readonly #assistants = new Map<string, { current: AssistantRecord; versions: AssistantRecord[] }>();

  /** True when one more assistant would pass the cap. */
  get full(): boolean {
    return this.#assistants.size >= MEMORY_ASSISTANT_LIMITS.assistants;
  }

  async get(scope: string, assistantId: string): Promise<AssistantRecord | undefined> {
    const found = this.#assistants.get(keyOf(scope, assistantId));
    return found === undefined ? undefined : copyData(found.current);
  }

  async list(scope: string): Promise<AssistantRecord[]> {
    return [...this.#assistants.values()].filter((entry) => entry.current.scope === scope).map((entry) => copyData(entry.current));
  }

  async versions(scope: string, assistantId: string): Promise<AssistantRecord[]> {
    const found = this.#assistants.get(keyOf(scope, assistantId));
    return found === undefined ? [] : found.versions.map((version) => copyData(version)).reverse();
  }

  async putVersion(record: AssistantRecord): Promise<void> {
    const key = keyOf(record.scope, record.assistant_id);
    const entry = this.#assistants.get(key) ?? { current: record, versions: [] };
    entry.current = copyData(record);
    entry.versions.push(copyData(record));
    // The oldest versions go past the cap, never the current one.
    while (entry.versions.length > MEMORY_ASSISTANT_LIMITS.versionsEach) {
      const oldest = entry.versions.findIndex((version) => version.version !== entry.current.version);
      entry.versions.splice(oldest, 1);
    }
    this.#assistants.set(key, entry);
  }

  async setCurrent(scope: string, assistantId: string, version: number, at: string): Promise<AssistantRecord | undefined> {
    const entry = this.#assistants.get(keyOf(scope, assistantId));
    const chosen = entry?.versions.find((candidate) => candidate.version === version);
    if (entry === undefined || chosen === undefined) return undefined;
    entry.current = { ...copyData(chosen), created_at: entry.current.created_at, updated_at: at };
    return copyData(entry.current);
  }

  async delete(scope: string, assistantId: string): Promise<boolean> {
    return this.#assistants.delete(keyOf(scope, assistantId));
  }
}
