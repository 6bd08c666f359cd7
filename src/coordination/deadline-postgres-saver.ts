import type { RunnableConfig } from "@langchain/core/runnables";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import type pg from "pg";
import { BackendUnavailableError } from "../errors/catalogue.js";
import { timed } from "../util/backend-timing.js";
import { withDeadline } from "../util/deadline.js";

// The checkpoint types, as the saver itself declares them.
type PutArguments = Parameters<PostgresSaver["put"]>;
type Checkpoint = PutArguments[1];
type CheckpointMetadata = PutArguments[2];
type ChannelVersions = PutArguments[3];
type CheckpointTuple = NonNullable<Awaited<ReturnType<PostgresSaver["getTuple"]>>>;
type PendingWrite = Parameters<PostgresSaver["putWrites"]>[1][number];

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

  constructor(pool: pg.Pool, options: { schema: string; timeoutMs: number }) {
    super(pool, undefined, { schema: options.schema });
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

  override getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    return this.#guard("checkpoint read", () => super.getTuple(config));
  }

  override put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    return this.#guard("checkpoint write", () => super.put(config, checkpoint, metadata, newVersions));
  }

  override putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string): Promise<void> {
    return this.#guard("checkpoint write", () => super.putWrites(config, writes, taskId));
  }

  override deleteThread(threadId: string): Promise<void> {
    return this.#guard("checkpoint delete", () => super.deleteThread(threadId));
  }

  /**
   * Cuts a thread's checkpoints to the latest of each namespace (`checkpointer.ttl`'s
   * `keep_latest`), with the writes and channel values only the others held, in one transaction.
   */
  keepLatest(threadId: string): Promise<void> {
    const table = (name: string) => `${pgIdentifier(this.#schema)}.${name}`;
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
