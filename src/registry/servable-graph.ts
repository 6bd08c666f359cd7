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

/**
 * A compiled graph: runnable (`invoke`, `stream`) and made of nodes and channels. A chat model
 * or any other runnable is not one, however it streams.
 */
export function isServableGraph(value: unknown): value is ServableGraph {
  if (typeof value !== "object" || value === null) return false;
  const { invoke, stream, nodes, channels } = value as ServableGraph & { nodes?: unknown; channels?: unknown };
  return (
    typeof invoke === "function" &&
    typeof stream === "function" &&
    typeof nodes === "object" &&
    nodes !== null &&
    typeof channels === "object" &&
    channels !== null
  );
}

/** The node names of a compiled graph and of every subgraph inside it. */
export function nodeNamesOf(graph: ServableGraph): Set<string> {
  const names = new Set<string>();
  const visit = (current: unknown, depth: number) => {
    const { nodes, getSubgraphs } = current as { nodes?: Record<string, unknown>; getSubgraphs?: () => Iterable<[string, unknown]> };
    for (const name of Object.keys(nodes ?? {})) if (!name.startsWith("__")) names.add(name);
    if (depth > 8 || typeof getSubgraphs !== "function") return;
    for (const [, subgraph] of getSubgraphs.call(current)) visit(subgraph, depth + 1);
  };
  visit(graph, 0);
  return names;
}

/** createAgent's middleware hooks: nodes that run around the model call, not the model's answer. */
const MIDDLEWARE_HOOK = /\.(before_agent|before_model|after_model|after_agent)$/u;

/**
 * The nodes whose model output is the answer, for `streamableNodeNames: "auto"`: every node of
 * the root graph (a subgraph node brings the nodes inside it) except tool nodes, whose messages
 * are tool results, and `createAgent`'s middleware hooks.
 */
export function answerNodesOf(graph: ServableGraph): string[] {
  const nodes = (graph as { nodes?: Record<string, { bound?: unknown }> }).nodes ?? {};
  return Object.entries(nodes)
    .filter(([name, node]) => {
      if (name.startsWith("__") || MIDDLEWARE_HOOK.test(name)) return false;
      const runnable = node?.bound as { constructor?: { name?: string } } | undefined;
      return runnable?.constructor?.name !== "ToolNode";
    })
    .map(([name]) => name);
}

/** A StateGraph (or any builder) that still needs `compile()`. */
export function isGraphBuilder(value: unknown): value is { compile(options?: object): unknown } {
  return (
    typeof value === "object" && value !== null && typeof (value as { compile?: unknown }).compile === "function" && !isServableGraph(value)
  );
}

/**
 * A copy of a compiled graph that checkpoints with `checkpointer`, the graph itself left as it
 * is (another model may serve it); undefined for a graph that cannot be copied.
 */
export function withCheckpointer(graph: ServableGraph, checkpointer: unknown): ServableGraph | undefined {
  const { withConfig } = graph as { withConfig?: (config: object) => ServableGraph };
  if (typeof withConfig !== "function") return undefined;
  const copy = withConfig.call(graph, {});
  copy.checkpointer = checkpointer;
  return copy;
}
