import type { FastifyInstance, FastifyRequest } from "fastify";
import { AgentNotFoundError } from "../../errors/catalogue.js";
import { requestScope } from "../../http/run-request.js";
import type { SurfaceContext } from "../../http/surface.js";
import { visibleModels } from "../../http/visibility.js";
import type { GraphRegistry } from "../../registry/graph-registry.js";
import { protocolJson } from "../../runs/agent/agent-graph.js";
import { checkpointThreadId, deleteCheckpoints } from "../../runs/agent/agent-run-config.js";
import { AgentRuns } from "../../runs/agent/agent-runs.js";
import { AgentThreads } from "../../runs/agent/agent-threads.js";
import { modelOfAssistant } from "../../runs/agent/assistants.js";
import { type AgentRecords, MemoryAgentRecords } from "../../store/agent-records.js";
import type { Usage } from "../../wire/response.js";
import { registerAssistantRoutes } from "./assistants-routes.js";
import { registerRunRoutes } from "./runs-routes.js";
import { registerStoreRoutes } from "./store-routes.js";
import { registerThreadRoutes } from "./threads-routes.js";

/** What every route group of the Agent Protocol shares. */
export interface LangGraphRoutes {
  registry: GraphRegistry;
  records: AgentRecords;
  runs: AgentRuns;
  threads: AgentThreads;
  /** The tenant a request acts for (`default` without tenants). */
  scopeOf(request: FastifyRequest): Promise<string>;
  /** The model an assistant id names, if the caller's key may use it; 404 otherwise. */
  modelOf(request: FastifyRequest, assistantId: string): string;
  /** The models the caller's key may use. */
  visible(request: FastifyRequest): string[];
  keepAliveMs: number;
  backendTimeoutMs: number;
  /** Request rates and concurrent runs, when the server limits them. */
  limits: SurfaceContext["limits"];
  /** When the assistants were made: the server's start. */
  startedAt: string;
}

/** Options of `server.langgraph` beyond on and off. */
export interface LangGraphSurfaceOptions {
  /** Where threads and runs are recorded. Default: in this process's memory. */
  records?: AgentRecords;
  /** The version `/info` gives. */
  version: string;
}

/** Mounts every route group of the Agent Protocol; the runs end with the app. */
export async function registerLangGraphRoutes(
  app: FastifyInstance,
  context: SurfaceContext,
  options: LangGraphSurfaceOptions,
): Promise<void> {
  const { registry } = context;
  // Where the rest of the store is: in memory, or in Postgres beside stored responses.
  const records = options.records ?? registry.store.agentRecords;
  const runs = new AgentRuns({
    registry,
    records,
    tracker: context.runs,
    backendTimeoutMs: context.backendTimeoutMs,
    log: app.log,
    ...(context.tracing === undefined ? {} : { tracing: context.tracing }),
    ...(context.metrics === undefined
      ? {}
      : { onUsage: (model: string, usage: Usage | undefined) => context.metrics?.tokens({ model, api: "langgraph" }, usage) }),
  });
  if (records instanceof MemoryAgentRecords && records.onEvict === undefined) {
    // A thread the cap pushes out takes its checkpoints with it.
    records.onEvict = (thread) => {
      if (thread.graph_id === undefined || !registry.getGraphNames().includes(thread.graph_id)) return;
      void runs
        .graphOf(thread.graph_id)
        .then(({ graph }) => deleteCheckpoints(graph, checkpointThreadId(thread.scope, thread.thread_id)))
        .catch(() => {});
    };
  }
  const routes: LangGraphRoutes = {
    registry,
    records,
    runs,
    threads: new AgentThreads(registry, records, runs, context.backendTimeoutMs),
    scopeOf: (request) => requestScope(request, context.checkpointScope),
    modelOf: (request, assistantId) => {
      const model = modelOfAssistant(registry, assistantId);
      if (!visibleModels(registry, request.chatServeCaller).includes(model)) throw new AgentNotFoundError("assistant", assistantId);
      return model;
    },
    visible: (request) => visibleModels(registry, request.chatServeCaller),
    keepAliveMs: context.keepAliveMs,
    backendTimeoutMs: context.backendTimeoutMs,
    limits: context.limits,
    startedAt: new Date().toISOString(),
  };
  app.addHook("onClose", () => runs.close());
  // Messages in replies as the protocol writes them (`{ type, content, … }`), not LangChain's constructor form.
  app.setReplySerializer((payload) => protocolJson(payload));
  app.get("/ok", async () => ({ ok: true }));
  app.get("/info", async () => ({
    version: options.version,
    flags: { assistants: true, crons: false, langsmith: false },
  }));
  registerAssistantRoutes(app, routes);
  registerThreadRoutes(app, routes);
  registerRunRoutes(app, routes);
  registerStoreRoutes(app, routes, registry.graphStore);
}
