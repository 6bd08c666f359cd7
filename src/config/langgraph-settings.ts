import type { LangGraphProject } from "./langgraph-json.js";

/**
 * What a `langgraph.json` says beyond its graphs, as a config's keys (references stay relative
 * to its folder): its `auth`, `store` (`index`, `ttl`), `checkpointer.ttl`, `ui`, and `http` (its routes, the
 * Agent Protocol's prefix, switches and headers, MCP and A2A off, CORS: any origin unless it
 * says otherwise, as LangGraph.js's server answers).
 */
export function agentServerSettings(project: LangGraphProject): Record<string, unknown> {
  const { http, auth, storeIndex, storeTtl, checkpointerTtl: ttl, ui, uiConfig } = project;
  const off = new Set(http?.disabled ?? []);
  const protocol = {
    ...(http?.mountPrefix === undefined ? {} : { prefix: http.mountPrefix }),
    ...(off.has("disable_assistants") ? { disableAssistants: true } : {}),
    ...(off.has("disable_threads") ? { disableThreads: true } : {}),
    ...(off.has("disable_runs") ? { disableRuns: true } : {}),
    ...(off.has("disable_store") ? { disableStore: true } : {}),
    ...(off.has("disable_meta") ? { disableMeta: true } : {}),
    ...(http?.configurableHeaders === undefined ? {} : { configurableHeaders: http.configurableHeaders }),
    ...(off.has("disable_webhooks") ? { disableWebhooks: true } : {}),
    ...(project.webhooks === undefined ? {} : { webhooks: project.webhooks }),
  };
  return {
    server: {
      cors: http?.cors ?? { origins: ["*"] },
      ...(Object.keys(protocol).length === 0 ? {} : { langgraph: protocol }),
      ...(off.has("disable_mcp") ? { mcp: false } : {}),
      ...(off.has("disable_a2a") ? { a2a: false } : {}),
    },
    ...(auth === undefined ? {} : { auth: { custom: auth.path, disableStudioAuth: auth.disableStudioAuth } }),
    ...(storeIndex === undefined && storeTtl === undefined
      ? {}
      : {
          graphStore: { ...(storeIndex === undefined ? {} : { index: storeIndex }), ...(storeTtl === undefined ? {} : { ttl: storeTtl }) },
        }),
    ...(http?.app === undefined
      ? {}
      : {
          http: {
            app: http.app,
            enableCustomRouteAuth: http.enableCustomRouteAuth,
            ...(http.mountPrefix === undefined ? {} : { prefix: http.mountPrefix }),
          },
        }),
    ...(ui === undefined || off.has("disable_ui") ? {} : { ui, ...(uiConfig === undefined ? {} : { uiConfig }) }),
    ...(ttl === undefined
      ? {}
      : {
          checkpointer: {
            kind: "memory",
            ttl: {
              ...(ttl.strategy === undefined ? {} : { strategy: ttl.strategy }),
              ...(ttl.default_ttl === undefined ? {} : { defaultTtl: ttl.default_ttl }),
              ...(ttl.sweep_interval_minutes === undefined ? {} : { sweepIntervalMinutes: ttl.sweep_interval_minutes }),
            },
          },
        }),
  };
}
