import { GraphConfigurationError } from "../errors/catalogue.js";
import { type ServableGraph, withCheckpointer } from "./servable-graph.js";

/** The async checkpointer methods the interrupt flow uses. */
const REQUIRED_CHECKPOINTER_METHODS = ["getTuple", "list", "put", "putWrites", "deleteThread"] as const;

/**
 * Makes an interrupt graph able to pause and resume, and returns the graph to serve: a copy
 * with the configured checkpointer when it has none of its own (the graph itself is left as it
 * is, so another model serving the same export is not made stateful by this one), and refuses
 * a checkpointer that lacks a method the service needs.
 */
export function prepareInterruptGraph(
  model: string,
  original: ServableGraph,
  fallbackCheckpointer: unknown,
  reason: "INTERRUPTS" | "threads" = "INTERRUPTS",
): ServableGraph {
  let graph = original;
  const has = reason === "threads" ? "threads: true" : "INTERRUPTS";
  if (typeof graph.getState !== "function") {
    throw new GraphConfigurationError(`model '${model}' has ${has} but its graph has no getState(); serve a compiled LangGraph graph`);
  }
  if (graph.checkpointer === undefined || graph.checkpointer === null || typeof graph.checkpointer !== "object") {
    if (fallbackCheckpointer === undefined) {
      throw new GraphConfigurationError(`model '${model}' has ${has} but no checkpointer; compile its graph with one`);
    }
    graph = withCheckpointer(original, fallbackCheckpointer) ?? original;
    graph.checkpointer = fallbackCheckpointer;
  }
  const saver = graph.checkpointer as Record<string, unknown>;
  const missing = REQUIRED_CHECKPOINTER_METHODS.filter((method) => typeof saver[method] !== "function");
  if (missing.length > 0) {
    const needs = reason === "threads" ? "threads need" : "interrupt runs need";
    throw new GraphConfigurationError(`the checkpointer of model '${model}' lacks ${missing.join(", ")}, which ${needs}`);
  }
  return graph;
}
