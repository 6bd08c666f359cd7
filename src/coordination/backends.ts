import { MemorySaver } from "@langchain/langgraph";
import type { ParsedConfig } from "../config/define-config.js";
import { InMemoryRunCoordinator } from "./in-memory-run-coordinator.js";
import { MemoryPendingRunIndex, type PendingRunIndex } from "./pending-run-index.js";
import type { RunCoordinator } from "./run-coordinator.js";

/** The durable-state backends a config file describes, shared by its interrupt graphs. */
export interface Backends {
  checkpointer: unknown;
  runCoordinator: RunCoordinator;
  pendingRuns: PendingRunIndex;
  /** Closes connections and pools. */
  close(): Promise<void>;
}

/** Builds the configured checkpointer, coordinator and pending-run index. */
export async function backendsFromConfig(config: Pick<ParsedConfig, "checkpointer" | "coordinator">): Promise<Backends> {
  // Memory only for now: both kinds keep state inside this one process.
  void config;
  return {
    checkpointer: new MemorySaver(),
    runCoordinator: new InMemoryRunCoordinator(),
    pendingRuns: new MemoryPendingRunIndex(),
    close: async () => {},
  };
}
