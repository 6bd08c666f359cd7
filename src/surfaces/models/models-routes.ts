import type { FastifyInstance } from "fastify";
import { assertVisible, visibleModels } from "../../http/visibility.js";
import { GraphFeature, wireFeatureName } from "../../registry/features.js";
import type { GraphRegistry } from "../../registry/graph-registry.js";
import type { ModelExtensionFull, ModelList, ModelObject } from "../../wire/response.js";

const CAPABILITIES = {
  client_events: {
    opt_in: { metadata_key: "graph_stream_events", versions: ["v1"] },
    types: ["status", "progress", "artifact"],
  },
  interrupts: { tool_name: "graph_interrupt", run_id_key: "graph_run_id" },
} as const;

function summary(registry: GraphRegistry, id: string, created: number): ModelObject {
  const config = registry.getGraph(id);
  return {
    id,
    object: "model",
    created,
    owned_by: "chat-serve",
    graph_chat_serve: {
      schema_version: 1,
      description: config.description,
      features: [...config.features].map(wireFeatureName),
    },
  };
}

function full(registry: GraphRegistry, id: string, created: number): ModelObject<ModelExtensionFull> {
  const base = summary(registry, id, created);
  const config = registry.getGraph(id);
  const capabilities: ModelExtensionFull["capabilities"] = {};
  if (config.features.has(GraphFeature.CLIENT_EVENTS)) capabilities.client_events = structuredClone(CAPABILITIES.client_events);
  if (config.features.has(GraphFeature.INTERRUPTS)) capabilities.interrupts = { ...CAPABILITIES.interrupts };
  const extension: ModelExtensionFull = { ...base.graph_chat_serve, apis: ["chat/completions", "responses"], capabilities };
  if (config.clientSettings !== undefined) extension.client_settings = config.clientSettings.descriptor();
  return { ...base, graph_chat_serve: extension };
}

/** `GET /models` and `GET /models/{model}`. `created` is when the server started. */
export function registerModelRoutes(app: FastifyInstance, registry: GraphRegistry, created: number): void {
  app.get("/models", { schema: { summary: "List the graphs served as models", tags: ["models"] } }, async (request) => {
    const body: ModelList = {
      object: "list",
      data: visibleModels(registry, request.chatServeCaller).map((id) => summary(registry, id, created)),
    };
    return body;
  });
  // A wildcard, not `:model`: the router caps named parameters at its `maxParamLength` (100
  // by default, counted before percent-decoding), which would refuse model IDs the registry
  // accepts.
  app.get<{ Params: { "*": string } }>(
    "/models/*",
    { schema: { summary: "Retrieve one model with its extension metadata", tags: ["models"] } },
    async (request) => {
      assertVisible(registry, request.chatServeCaller, request.params["*"]);
      return full(registry, request.params["*"], created);
    },
  );
}
