import { GraphConfigurationError } from "../errors/catalogue.js";
import type { GraphSource } from "./graph-config.js";
import { isGraphBuilder, isServableGraph, type ServableGraph } from "./servable-graph.js";

/**
 * Turns a graph source into a compiled graph: calls a factory (sync or async), compiles a
 * StateGraph. A factory may return a StateGraph too; anything else is a configuration error.
 */
export async function resolveGraphSource(modelId: string, source: GraphSource): Promise<ServableGraph> {
  let value: unknown = source;
  if (typeof value === "function" && !isServableGraph(value)) {
    value = await (value as () => unknown)();
  }
  if (isGraphBuilder(value)) value = value.compile();
  if (!isServableGraph(value)) {
    throw new GraphConfigurationError(`the graph of model '${modelId}' must be a compiled graph, a StateGraph or a factory returning one`);
  }
  return value;
}
