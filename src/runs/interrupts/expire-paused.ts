import { expirePendingRun } from "../../coordination/expire-pending.js";
import type { GraphRegistry } from "../../registry/graph-registry.js";
import { withDeadline } from "../../util/deadline.js";
import { checkpointKey } from "./checkpoint-key.js";

/**
 * Ends a paused run without running it, as if its time to answer had run out (a question
 * declined over MCP, an A2A task cancelled while it waits for input).
 */
export async function expirePausedRun(
  options: { registry: GraphRegistry; backendTimeoutMs: number },
  scope: string,
  model: string,
  runId: string,
): Promise<void> {
  const { registry, backendTimeoutMs } = options;
  const graph = await registry.resolveGraph(model);
  const stores = { pendingRuns: registry.pendingRuns, coordinator: registry.coordinatorOf(model), checkpointer: graph.checkpointer };
  // A lease, a checkpoint and an index call: three backend calls' worth of deadline.
  await withDeadline("the run coordinator", backendTimeoutMs * 3, expirePendingRun(stores, checkpointKey(scope, model, runId)));
}
