import { v5 as uuid5 } from "@langchain/core/utils/uuid";
import { AgentNotFoundError } from "../../errors/catalogue.js";
import type { GraphRegistry } from "../../registry/graph-registry.js";

/**
 * The namespace of system assistant ids: the LangGraph server's, so that a model's assistant
 * has the id it has under `langgraph dev` (uuid5 of the graph id).
 */
const NAMESPACE_GRAPH = "6ba7b821-9dad-11d1-80b4-00c04fd430c8";

/** The id of a model's system assistant. */
const ids = new Map<string, string>();

export function assistantIdOf(model: string): string {
  let id = ids.get(model);
  if (id === undefined) {
    id = uuid5(model, NAMESPACE_GRAPH);
    ids.set(model, id);
  }
  return id;
}

/** The model an assistant id (or a model id, accepted wherever an assistant id is) names; 404 otherwise. */
export function modelOfAssistant(registry: GraphRegistry, assistantId: string): string {
  const models = registry.getGraphNames();
  if (models.includes(assistantId)) return assistantId;
  const model = models.find((name) => assistantIdOf(name) === assistantId);
  if (model === undefined) throw new AgentNotFoundError("assistant", assistantId);
  return model;
}

/** The system assistant of a model, as the protocol describes an assistant. */
export function systemAssistant(registry: GraphRegistry, model: string, startedAt: string): Record<string, unknown> {
  const config = registry.getGraph(model);
  return {
    assistant_id: assistantIdOf(model),
    graph_id: model,
    config: {},
    context: {},
    metadata: { created_by: "system" },
    name: model,
    description: config.description ?? null,
    version: 1,
    created_at: startedAt,
    updated_at: startedAt,
  };
}
