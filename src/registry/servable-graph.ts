/**
 * The part of a compiled LangGraph graph the service relies on. Checked structurally, so a
 * graph built with another copy of `@langchain/langgraph` still qualifies.
 */
export interface ServableGraph {
  invoke(input: unknown, config?: Record<string, unknown>): Promise<unknown>;
  stream(input: unknown, config?: Record<string, unknown>): Promise<AsyncIterable<unknown>>;
  getState?(config: Record<string, unknown>): Promise<unknown>;
  checkpointer?: unknown;
  builder?: unknown;
  name?: string;
}

export function isServableGraph(value: unknown): value is ServableGraph {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as ServableGraph).invoke === "function" &&
    typeof (value as ServableGraph).stream === "function"
  );
}

/** A StateGraph (or any builder) that still needs `compile()`. */
export function isGraphBuilder(value: unknown): value is { compile(options?: object): unknown } {
  return (
    typeof value === "object" && value !== null && typeof (value as { compile?: unknown }).compile === "function" && !isServableGraph(value)
  );
}
