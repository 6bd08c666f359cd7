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
  value = unwrapAgent(value);
  if (!isServableGraph(value)) {
    throw new GraphConfigurationError(
      `the graph of model '${modelId}' must be a compiled graph, a StateGraph or a factory returning one (got ${describe(value)})`,
    );
  }
  return value;
}

/**
 * LangChain v1's `createAgent` returns a `ReactAgent`: a wrapper whose `graph` is the compiled
 * graph it runs. The wrapper is served as that graph, as the LangGraph API server does: its
 * default config is baked into the graph, and its tools, middleware and interrupts are nodes of it.
 */
function unwrapAgent(value: unknown): unknown {
  if (isServableGraph(value) || typeof value !== "object" || value === null) return value;
  const inner = (value as { graph?: unknown }).graph;
  return isServableGraph(inner) ? inner : value;
}

/** What a value that is not a graph is, in a few words: its class, or its type. */
function describe(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value !== "object") return `a ${typeof value}`;
  const name = (value as { constructor?: { name?: string } }).constructor?.name;
  const looksLikeModel = typeof (value as { invoke?: unknown }).invoke === "function";
  return `${name && name !== "Object" ? `a ${name}` : "an object"}${looksLikeModel ? ", a runnable that is not a graph (a chat model?)" : ""}`;
}
