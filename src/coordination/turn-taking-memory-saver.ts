import type { RunnableConfig } from "@langchain/core/runnables";
import { type Checkpoint, type CheckpointMetadata, type CheckpointTuple, MemorySaver } from "@langchain/langgraph";
import { EventLoopTurns } from "../util/event-loop-turns.js";
import { runCheckpointMetadata } from "./run-checkpoint-metadata.js";
import { SerdeInTurns } from "./serde-in-turns.js";

/**
 * LangGraph's in-memory checkpointer, sharing the event loop: a graph on it never waits on I/O,
 * so a run's every step (a state of 10,000 messages written and read at each step) would hold
 * the loop from its first step to its last, `/health` and every other request waiting. Each call
 * lets the loop take a turn first once the run has worked past its budget, and a checkpoint is
 * read in turns (`SerdeInTurns`), so a run is cut into pieces others are served between.
 */
export class TurnTakingMemorySaver extends MemorySaver {
  readonly #turns = new EventLoopTurns();

  constructor() {
    super();
    this.serde = new SerdeInTurns(this.serde);
  }

  override async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    await this.#turns.take();
    return super.getTuple(config);
  }

  override async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata): Promise<RunnableConfig> {
    await this.#turns.take();
    return super.put(config, checkpoint, runCheckpointMetadata(config, metadata));
  }

  override async putWrites(config: RunnableConfig, writes: Parameters<MemorySaver["putWrites"]>[1], taskId: string): Promise<void> {
    await this.#turns.take();
    return super.putWrites(config, writes, taskId);
  }
}
