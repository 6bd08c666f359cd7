import { copyData } from "../util/copy-data.js";
import { FairMap } from "../util/fair-share.js";

/** A thread's status as the LangGraph Agent Protocol has it. */
export type AgentThreadStatus = "idle" | "busy" | "interrupted" | "error";

/** A run's status as the LangGraph Agent Protocol has it. */
export type AgentRunStatus = "pending" | "running" | "error" | "success" | "timeout" | "interrupted";

/** What a run does to a thread that is already running one. */
export const MULTITASK_STRATEGIES = ["reject", "enqueue", "interrupt", "rollback"] as const;
export type MultitaskStrategy = (typeof MULTITASK_STRATEGIES)[number];

/** A thread of the Agent Protocol surface: who owns it and what the protocol says of it; its state is in the checkpointer. */
export interface AgentThreadRecord {
  thread_id: string;
  /** The server-trusted scope (tenant) that owns it; never sent to clients. */
  scope: string;
  /** The graph that last ran on it (the checkpointer it lives in); undefined before its first run. */
  graph_id?: string;
  created_at: string;
  updated_at: string;
  state_updated_at: string;
  metadata: Record<string, unknown>;
  status: AgentThreadStatus;
  /** What the last run that failed said. */
  error?: string | null;
  /** Swept after this many minutes without an update (its own `ttl`; else the deployment's `checkpointer.ttl`). */
  ttl_minutes?: number;
  /** What its own `ttl` does then: `delete` the thread, or `keep_latest` checkpoint only (else the deployment's strategy). */
  ttl_strategy?: "delete" | "keep_latest";
  /** The `updated_at` its checkpoints were last cut to the latest at: not swept again until it changes. */
  pruned_at?: string;
}

/** Whether a thread has been idle past its time to live (its own, else `defaultMinutes`) at `now`, and not swept since. */
function isExpired(record: AgentThreadRecord, now: Date, defaultMinutes: number | undefined): boolean {
  const minutes = record.ttl_minutes ?? defaultMinutes;
  if (record.pruned_at !== undefined && record.pruned_at === record.updated_at) return false;
  return minutes !== undefined && Date.parse(record.updated_at) + minutes * 60_000 <= now.getTime();
}

/** One run of the Agent Protocol surface. */
export interface AgentRunRecord {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  scope: string;
  created_at: string;
  updated_at: string;
  status: AgentRunStatus;
  metadata: Record<string, unknown>;
  multitask_strategy: MultitaskStrategy;
  /** A stateless run's thread, deleted when the run ends (`on_completion: "delete"`). */
  temporary: boolean;
  cancel_reason?: string | null;
  /**
   * What the run was asked to do, as LangGraph's server keeps it: `input`, `command`, `config`
   * (its `configurable` with the run's, thread's, graph's and assistant's ids), `context`,
   * `stream_mode`, `interrupt_before` / `interrupt_after`, `webhook`, `subgraphs`, `temporary`.
   */
  kwargs?: Record<string, unknown>;
  /**
   * The thread's checkpoint when a run of the shared queue began (null: none yet): a worker that
   * takes the run over goes on from a later one, which the run wrote. Not shown to clients.
   */
  checkpoint_before?: string | null;
}

/**
 * Where the Agent Protocol surface keeps its threads and runs: small records, scoped to a
 * tenant. A record of another scope is never returned (it does not exist for that caller).
 */
export interface AgentRecords {
  getThread(scope: string, threadId: string): Promise<AgentThreadRecord | undefined>;
  /** Adds or replaces a thread. */
  putThread(record: AgentThreadRecord): Promise<void>;
  /** Deletes a thread and its runs; true when it existed. */
  deleteThread(scope: string, threadId: string): Promise<boolean>;
  /** Every thread of a scope (the surface filters, sorts and pages them). */
  listThreads(scope: string): Promise<AgentThreadRecord[]>;
  /**
   * Threads of any scope idle past their time to live at `now` (their own `ttl_minutes`, else
   * `defaultMinutes` when there is one), at most `limit`, those longest idle first.
   */
  expiredThreads(now: Date, defaultMinutes: number | undefined, limit: number): Promise<AgentThreadRecord[]>;
  getRun(scope: string, runId: string): Promise<AgentRunRecord | undefined>;
  putRun(record: AgentRunRecord): Promise<void>;
  deleteRun(scope: string, runId: string): Promise<boolean>;
  /** A thread's runs, newest first. */
  listRuns(scope: string, threadId: string): Promise<AgentRunRecord[]>;
}

/**
 * How much the in-memory records keep: threads beyond the cap go with their runs, taken from
 * the tenant holding the most, its least recently updated first (see `FairShare`).
 */
export interface MemoryAgentRecordsLimits {
  /** Threads kept (default 10,000). */
  maxThreads?: number;
  /** Runs kept per thread (default 100), the oldest going first. */
  maxRunsPerThread?: number;
}

const ownerKey = (scope: string, id: string) => `${scope}\u0000${id}`;

/**
 * The embedded records: in this process's memory, gone at restart, bounded by count. A thread
 * that is evicted is handed to `onEvict`, so that its checkpoints are deleted too.
 */
export class MemoryAgentRecords implements AgentRecords {
  /** Least recently updated first, per tenant: what an eviction takes. */
  readonly #threads = new FairMap<AgentThreadRecord>((record) => record.scope);
  readonly #runs = new Map<string, AgentRunRecord>();
  /** Run ids of each thread, oldest first. */
  readonly #threadRuns = new Map<string, string[]>();
  readonly #maxThreads: number;
  readonly #maxRunsPerThread: number;
  /** Told of each thread the cap pushes out (never a busy one). */
  onEvict: ((thread: AgentThreadRecord) => void) | undefined;

  constructor(limits: MemoryAgentRecordsLimits = {}) {
    this.#maxThreads = limits.maxThreads ?? 10_000;
    this.#maxRunsPerThread = limits.maxRunsPerThread ?? 100;
  }

  async getThread(scope: string, threadId: string): Promise<AgentThreadRecord | undefined> {
    const record = this.#threads.get(ownerKey(scope, threadId));
    return record === undefined ? undefined : copyData(record);
  }

  async putThread(record: AgentThreadRecord): Promise<void> {
    const key = ownerKey(record.scope, record.thread_id);
    // A write makes the thread its tenant's most recently used.
    this.#threads.set(key, copyData(record));
    this.#evict();
  }

  /** Over the cap, the tenant holding the most threads loses its least recently updated idle ones. */
  #evict(): void {
    for (const [key, record] of this.#threads.evictOver(this.#maxThreads, (thread) => thread.status === "busy")) {
      this.#dropThread(key);
      this.onEvict?.(record);
    }
  }

  #dropThread(key: string): void {
    this.#threads.delete(key);
    for (const runId of this.#threadRuns.get(key) ?? []) this.#runs.delete(runId);
    this.#threadRuns.delete(key);
  }

  async deleteThread(scope: string, threadId: string): Promise<boolean> {
    const key = ownerKey(scope, threadId);
    const existed = this.#threads.has(key);
    this.#dropThread(key);
    return existed;
  }

  async listThreads(scope: string): Promise<AgentThreadRecord[]> {
    return [...this.#threads.values()].filter((record) => record.scope === scope).map((record) => copyData(record));
  }

  async expiredThreads(now: Date, defaultMinutes: number | undefined, limit: number): Promise<AgentThreadRecord[]> {
    return [...this.#threads.values()]
      .filter((record) => isExpired(record, now, defaultMinutes))
      .sort((a, b) => a.updated_at.localeCompare(b.updated_at))
      .slice(0, limit)
      .map((record) => copyData(record));
  }

  async getRun(scope: string, runId: string): Promise<AgentRunRecord | undefined> {
    const record = this.#runs.get(runId);
    return record === undefined || record.scope !== scope ? undefined : copyData(record);
  }

  async putRun(record: AgentRunRecord): Promise<void> {
    const key = ownerKey(record.scope, record.thread_id);
    if (!this.#runs.has(record.run_id)) {
      const ids = this.#threadRuns.get(key) ?? [];
      ids.push(record.run_id);
      while (ids.length > this.#maxRunsPerThread) this.#runs.delete(ids.shift() as string);
      this.#threadRuns.set(key, ids);
    }
    this.#runs.set(record.run_id, copyData(record));
  }

  async deleteRun(scope: string, runId: string): Promise<boolean> {
    const record = this.#runs.get(runId);
    if (record === undefined || record.scope !== scope) return false;
    this.#runs.delete(runId);
    const key = ownerKey(scope, record.thread_id);
    const ids = this.#threadRuns.get(key);
    if (ids !== undefined)
      this.#threadRuns.set(
        key,
        ids.filter((id) => id !== runId),
      );
    return true;
  }

  async listRuns(scope: string, threadId: string): Promise<AgentRunRecord[]> {
    const ids = this.#threadRuns.get(ownerKey(scope, threadId)) ?? [];
    return ids
      .map((id) => this.#runs.get(id))
      .filter((record): record is AgentRunRecord => record !== undefined)
      .reverse()
      .map((record) => copyData(record));
  }
}
