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

  constructor(pool: pg.Pool, options: { schema: string; timeoutMs: number }) {
    super(pool, undefined, { schema: options.schema });
    this.#timeoutMs = options.timeoutMs;
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
}
