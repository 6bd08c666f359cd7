import type { RunnableConfig } from "@langchain/core/runnables";

/** What the Agent Protocol's `configurable` holds that a checkpoint's metadata leaves out (as LangGraph's server leaves them out). */
const LEFT_OUT = new Set(["checkpoint_ns", "checkpoint_id", "checkpoint_map", "run_id", "thread_id", "langgraph_auth_user"]);

/**
 * A checkpoint's metadata as LangGraph's server writes it for a run of the Agent Protocol: the
 * run's `configurable` (its `graph_id`, `assistant_id`, the user's id, the headers passed to it)
 * and its metadata (`run_id`, `run_attempt`…) beside what LangGraph wrote, so that a thread's
 * history says which run, graph and assistant made each checkpoint. Any other run's (one
 * without a `graph_id` in its config) is left as LangGraph wrote it.
 */
export function runCheckpointMetadata<M extends Record<string, unknown>>(config: RunnableConfig, metadata: M): M {
  const configurable = config.configurable ?? {};
  if (typeof configurable.graph_id !== "string") return metadata;
  const fromConfigurable = Object.entries(configurable).filter(
    ([key, value]) => !key.startsWith("__") && !LEFT_OUT.has(key) && (typeof value !== "object" || value === null),
  );
  return { ...Object.fromEntries(fromConfigurable), ...config.metadata, ...metadata };
}
