import type { RunnableConfig } from "@langchain/core/runnables";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import type pg from "pg";
import { BackendUnavailableError } from "../errors/catalogue.js";
import { timed } from "../util/backend-timing.js";
import { withDeadline } from "../util/deadline.js";
import { runCheckpointMetadata } from "./run-checkpoint-metadata.js";
import { SerdeInTurns } from "./serde-in-turns.js";

// The checkpoint types, as the saver itself declares them.
type PutArguments = Parameters<PostgresSaver["put"]>;
type Checkpoint = PutArguments[1];
type CheckpointMetadata = PutArguments[2];
type ChannelVersions = PutArguments[3];
type CheckpointTuple = NonNullable<Awaited<ReturnType<PostgresSaver["getTuple"]>>>;
type PendingWrite = Parameters<PostgresSaver["putWrites"]>[1][number];

/** The path LangGraph gives the task that writes a run's input into the graph (`taskPathStr`). */
const START_TASK = "~__pregel_pull, __start__";
const MAX_INPUTS_TRACKED = 10_000;

/**
 * LangGraph's Postgres checkpointer with a deadline on every read and write, and one error
 * for every way the database can fail: `backend_unavailable`. A failed write never leaves a
 * half-written checkpoint (the saver writes in transactions); a stalled database answers the
 * request with 503 within the deadline instead of holding it.
 */
export class DeadlinePostgresSaver extends PostgresSaver {
  readonly #timeoutMs: number;
  readonly #pool: pg.Pool;
  readonly #schema: string;
  /**
   * Each thread's saves that no step waits for (those of the step that only starts the graph,
   * below): every later call on the thread waits for them first, and fails if they did.
   */
  readonly #behind = new Map<string, Promise<unknown>>();
  /** Input checkpoints saved here (by thread, namespace and id): which tasks wrote in the step after each so far. */
  readonly #afterInput = new Map<string, "none" | "start" | "others">();

  constructor(pool: pg.Pool, options: { schema: string; timeoutMs: number }) {
    super(pool, undefined, { schema: options.schema });
    // A large checkpoint is read in turns of the event loop, as on the in-memory checkpointer.
    this.serde = new SerdeInTurns(this.serde);
    this.#timeoutMs = options.timeoutMs;
    this.#pool = pool;
    this.#schema = options.schema;
  }

  async #guard<T>(what: string, operation: () => Promise<T>): Promise<T> {
    try {
      return await timed("checkpointer", what, () => withDeadline(what, this.#timeoutMs, operation()));
    } catch (error) {
      throw new BackendUnavailableError("The checkpoint store is unavailable; retry shortly.", { cause: error });
    }
  }

  /** The threads with saves no step has waited for yet (for the tests that count what is left). */
  get savingBehind(): number {
    return this.#behind.size;
  }

  /** After the thread's saves no step waited for: their failure is this call's. */
  async #after(threadId: unknown): Promise<void> {
    const behind = typeof threadId === "string" ? this.#behind.get(threadId) : undefined;
    if (behind === undefined) return;
    try {
      await behind;
    } finally {
      if (this.#behind.get(threadId as string) === behind) this.#behind.delete(threadId as string);
    }
  }

  /** A save made now, that the thread's next call waits for, but not the step that made it. */
  #saveBehind(threadId: string, save: () => Promise<unknown>): void {
    const chained = this.#after(threadId).then(save);
    // Its failure reaches the thread's next call (the run's next step, or its end), not the process.
    chained.catch(() => {});
    this.#behind.set(threadId, chained);
  }

  override async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    await this.#after(config.configurable?.thread_id);
    return this.#guard("checkpoint read", () => super.getTuple(config));
  }

  override async *list(...args: Parameters<PostgresSaver["list"]>): ReturnType<PostgresSaver["list"]> {
    await this.#after(args[0].configurable?.thread_id);
    yield* super.list(...args);
  }

  /**
   * A run's input checkpoint, and the step after it when it only ran `__start__` (which copies
   * the input into the graph's channels: nothing in it has an effect to repeat), are saved
   * without holding the graph's first node, which under `durability: "sync"` (every queued
   * run's) would wait for both: its first token comes two database round trips sooner. They are
   * saved in order before anything else of the thread; a process lost before they are saved
   * starts the run again from its input, which comes to the same; a failure to save them fails
   * the next save of the run, as it would have failed the run.
   */
  override async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const { thread_id: threadId, checkpoint_ns: namespace = "", checkpoint_id: parent } = config.configurable ?? {};
    const save = () =>
      this.#guard("checkpoint write", () => super.put(config, checkpoint, runCheckpointMetadata(config, metadata), newVersions));
    const after = `${threadId}\u0000${namespace}\u0000${parent}`;
    const startOnly = this.#afterInput.get(after) === "start";
    this.#afterInput.delete(after);
    if (metadata?.source === "input" && typeof threadId === "string") {
      // Bounded: a run that ends before its first step leaves its entry, the oldest goes.
      if (this.#afterInput.size >= MAX_INPUTS_TRACKED) this.#afterInput.delete(this.#afterInput.keys().next().value!);
      this.#afterInput.set(`${threadId}\u0000${namespace}\u0000${checkpoint.id}`, "none");
    }
    if ((startOnly || metadata?.source === "input") && typeof threadId === "string") {
      this.#saveBehind(threadId, save);
      return { configurable: { thread_id: threadId, checkpoint_ns: namespace, checkpoint_id: checkpoint.id } };
    }
    await this.#after(threadId);
    return save();
  }

  override async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath?: string): Promise<void> {
    const { thread_id: threadId, checkpoint_ns: namespace = "", checkpoint_id: parent } = config.configurable ?? {};
    const save = () => this.#guard("checkpoint write", () => super.putWrites(config, writes, taskId));
    const after = `${threadId}\u0000${namespace}\u0000${parent}`;
    const seen = this.#afterInput.get(after);
    if (seen !== undefined && typeof threadId === "string") {
      // Any other task's write in that step: the step is saved as every step is.
      const start = taskPath === START_TASK && seen !== "others";
      this.#afterInput.set(after, start ? "start" : "others");
      if (start) {
        this.#saveBehind(threadId, save);
        return;
      }
    }
    await this.#after(threadId);
    return save();
  }

  override async deleteThread(threadId: string): Promise<void> {
    await this.#after(threadId).catch(() => {});
    return this.#guard("checkpoint delete", () => super.deleteThread(threadId));
  }

  /**
   * Cuts a thread's checkpoints to the latest of each namespace (`checkpointer.ttl`'s
   * `keep_latest`), with the writes and channel values only the others held, in one transaction.
   */
  async keepLatest(threadId: string): Promise<void> {
    const table = (name: string) => `${pgIdentifier(this.#schema)}.${name}`;
    await this.#after(threadId).catch(() => {});
    return this.#guard("checkpoint delete", async () => {
      const client = await this.#pool.connect();
      try {
        await client.query("BEGIN");
        await client.query(
          `DELETE FROM ${table("checkpoints")} c USING (
             SELECT checkpoint_ns, max(checkpoint_id) AS latest FROM ${table("checkpoints")} WHERE thread_id = $1 GROUP BY checkpoint_ns
           ) l WHERE c.thread_id = $1 AND c.checkpoint_ns = l.checkpoint_ns AND c.checkpoint_id <> l.latest`,
          [threadId],
        );
        await client.query(
          `DELETE FROM ${table("checkpoint_writes")} w WHERE w.thread_id = $1 AND NOT EXISTS (
             SELECT 1 FROM ${table("checkpoints")} c WHERE c.thread_id = $1 AND c.checkpoint_ns = w.checkpoint_ns AND c.checkpoint_id = w.checkpoint_id)`,
          [threadId],
        );
        await client.query(
          `DELETE FROM ${table("checkpoint_blobs")} b WHERE b.thread_id = $1 AND NOT EXISTS (
             SELECT 1 FROM ${table("checkpoints")} c WHERE c.thread_id = $1 AND c.checkpoint_ns = b.checkpoint_ns
               AND c.checkpoint -> 'channel_versions' ->> b.channel = b.version)`,
          [threadId],
        );
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    });
  }
}

/** A name quoted for SQL. */
function pgIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
