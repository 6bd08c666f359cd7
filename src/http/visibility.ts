import type { GraphRegistry } from "../registry/graph-registry.js";
import type { Caller } from "./auth.js";

/** The models a caller may use: all of them, or those its API key names. */
export function visibleModels(registry: GraphRegistry, caller: Caller | undefined): string[] {
  const models = caller?.models;
  return models === undefined ? registry.getGraphNames() : registry.getGraphNames().filter((id) => models.has(id));
}

/** Throws the 404 a model gets that does not exist for this caller. */
export function assertVisible(registry: GraphRegistry, caller: Caller | undefined, model: string): void {
  if (caller?.models !== undefined && !caller.models.has(model)) throw registry.modelNotFound(model, visibleModels(registry, caller));
}
