import type { FastifyInstance, FastifyRequest } from "fastify";
import { checkRunWebhook, type RunWebhookPolicy, RunWebhooks } from "../../background/run-webhooks.js";
import { AgentConflictError, AgentNotFoundError } from "../../errors/catalogue.js";
import { type LangGraphAuth, matchesFilters } from "../../http/langgraph-auth.js";
import { RouteTable } from "../../http/lazy-routes.js";
import { requestScope } from "../../http/run-request.js";
import type { SurfaceContext } from "../../http/surface.js";
import { visibleModels } from "../../http/visibility.js";
import type { GraphRegistry } from "../../registry/graph-registry.js";
import { AgentAssistants } from "../../runs/agent/agent-assistants.js";
import { type AgentRunRequest, backendCall, checkpointThreadId, deleteCheckpoints } from "../../runs/agent/agent-run-config.js";
import { AgentRuns } from "../../runs/agent/agent-runs.js";
import { AgentThreads } from "../../runs/agent/agent-threads.js";
import type { CronScheduler } from "../../runs/agent/cron-scheduler.js";
import { ProtocolThreads } from "../../runs/agent/protocol-threads.js";
import { sweepExpiredThreads } from "../../runs/agent/thread-sweeper.js";
import { type AgentRecords, MemoryAgentRecords } from "../../store/agent-records.js";
import type { AssistantRecords } from "../../store/assistant-records.js";
import type { CronRecord, CronRecords } from "../../store/cron-records.js";
import type { Usage } from "../../wire/response.js";
import { registerAssistantRoutes } from "./assistants-routes.js";
import { configurableHeaders } from "./configurable-headers.js";
import { registerCronRoutes } from "./crons-routes.js";
import { parseRunCreate } from "./langgraph-schemas.js";
import { matchesFilter, registerProtocolRoutes } from "./protocol-routes.js";
import type { ProtocolSocketDeps } from "./protocol-socket.js";
import { registerRunRoutes } from "./runs-routes.js";
import { registerStoreRoutes } from "./store-routes.js";
import { registerThreadRoutes } from "./threads-routes.js";

/** What every route group of the Agent Protocol shares. */
export interface LangGraphRoutes {
  registry: GraphRegistry;
  records: AgentRecords;
  runs: AgentRuns;
  threads: AgentThreads;
  /** Protocol v2: each thread's commands and event log. */
  protocol: ProtocolThreads;
  /** The tenant a request acts for (`default` without tenants, and for the users of a LangGraph `Auth`). */
  scopeOf(request: FastifyRequest): Promise<string>;
  /** The project's LangGraph `Auth`, whose handlers decide what each user sees (`route-auth.ts`). */
  auth?: LangGraphAuth;
  /** The models the caller's key may use. */
  visible(request: FastifyRequest): string[];
  keepAliveMs: number;
  stalledClientMs: number;
  backendTimeoutMs: number;
  /** Request rates and concurrent runs, when the server limits them. */
  limits: SurfaceContext["limits"];
  /** When the assistants were made: the server's start. */
  startedAt: string;
  /** Assistants: each model's system assistant and those clients make. */
  assistants: AgentAssistants;
  /** The server's metrics, when they are on. */
  metrics: SurfaceContext["metrics"];
  /** Crons: where they are kept, and what fires them. */
  crons: { records: CronRecords; scheduler: CronScheduler; maxPerTenant: number };
  /**
   * The run a request starts and the model it runs: its body's, with the request headers
   * `configurable_headers` passes (`config.configurable`) and its assistant's config and
   * context under its own. An assistant not there, or whose model the caller may not use: 404.
   */
  prepareRun(request: FastifyRequest, scope: string, run: AgentRunRequest): Promise<{ run: AgentRunRequest; model: string }>;
}

/** How many enabled crons a tenant may have unless `server.langgraph.maxCronsPerTenant` says otherwise. */
const MAX_CRONS_PER_TENANT = 100;

/** Options of `server.langgraph` beyond on and off. */
export interface LangGraphSurfaceOptions {
  /** Where threads and runs are recorded. Default: in this process's memory. */
  records?: AgentRecords;
  /** The version `/info` gives. */
  version: string;
  /** When the assistants were made: the server's start. */
  startedAt: string;
  /** Where the assistants clients make are kept. Default: beside the threads' store (in memory, or Postgres). */
  assistantRecords?: AssistantRecords;
  /** Which request headers a run gets in `config.configurable` (default: `x-*` but keys, and `user-agent`). */
  configurableHeaders?: { includes?: string[]; excludes?: string[] };
  /** What a run's `webhook` may call; `disabled`: runs may not ask for one. */
  webhooks?: { policy: RunWebhookPolicy; disabled: boolean };
  /** What fires the crons (the surface's, made at start so that they fire before any request). */
  cronScheduler: CronScheduler;
  /** The most enabled crons one tenant (one user under a project's `Auth`) may have; default 100. */
  maxCronsPerTenant?: number;
}

/**
 * Every route group of the Agent Protocol, as handlers: loaded on the first request to the
 * protocol. The runs it starts are the engine's, which the caller closes with the app.
 */
export function langGraphRoutes(
  app: FastifyInstance,
  context: SurfaceContext,
  options: LangGraphSurfaceOptions,
): {
  table: RouteTable;
  runs: AgentRuns;
  protocol: ProtocolThreads;
  socket: ProtocolSocketDeps;
  sweep: () => Promise<number>;
  webhooks: RunWebhooks;
  fireCron: (cron: CronRecord) => Promise<void>;
} {
  const { registry } = context;
  const webhookPolicy = options.webhooks?.policy ?? {};
  // Each run that asked for it is POSTed to its webhook when it ends, wherever it ran.
  const webhooks = new RunWebhooks(webhookPolicy, () => app.server.address(), app.log);
  // Where the rest of the store is: in memory, or in Postgres beside stored responses.
  const records = options.records ?? registry.store.agentRecords;
  const runs = new AgentRuns({
    registry,
    records,
    tracker: context.runs,
    backendTimeoutMs: context.backendTimeoutMs,
    log: app.log,
    ...(context.developmentErrors === true ? { showGraphErrors: true } : {}),
    ...(context.background?.sharedAgentRuns === undefined ? {} : { shared: context.background.sharedAgentRuns }),
    ...(context.tracing === undefined ? {} : { tracing: context.tracing }),
    ...(context.metrics === undefined
      ? {}
      : { onUsage: (model: string, usage: Usage | undefined) => context.metrics?.tokens({ model, api: "langgraph" }, usage) }),
    onEnded: (run, request, result, startedAt) => {
      if (request.webhook !== undefined) webhooks.send(request.webhook, run, result, startedAt);
    },
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
  const threads = new AgentThreads(registry, records, runs, context.backendTimeoutMs);
  const passHeaders = configurableHeaders(options.configurableHeaders);
  const assistants = new AgentAssistants(registry, options.assistantRecords ?? registry.store.assistantRecords, options.startedAt);
  const routes: LangGraphRoutes = {
    registry,
    records,
    runs,
    threads,
    protocol: new ProtocolThreads({ threads, logs: runs.protocolLogs, matches: matchesFilter }),
    // A LangGraph `Auth`'s users share the threads, as on LangGraph's server: its handlers' filters tell them apart.
    scopeOf: (request) =>
      request.chatServeCaller?.sharesAgentScope === true && context.checkpointScope === undefined
        ? Promise.resolve("default")
        : requestScope(request, context.checkpointScope),
    ...(context.authenticator?.customAuth === undefined ? {} : { auth: context.authenticator.customAuth }),
    visible: (request) => visibleModels(registry, request.chatServeCaller),
    keepAliveMs: context.keepAliveMs,
    stalledClientMs: context.stalledClientMs,
    backendTimeoutMs: context.backendTimeoutMs,
    limits: context.limits,
    startedAt: options.startedAt,
    assistants,
    crons: {
      records: registry.store.cronRecords,
      scheduler: options.cronScheduler,
      maxPerTenant: options.maxCronsPerTenant ?? MAX_CRONS_PER_TENANT,
    },
    metrics: context.metrics,
    prepareRun: async (request, scope, asked) => {
      const found = await backendCall("the assistant records", context.backendTimeoutMs, () => assistants.find(scope, asked.assistantId));
      if (found === undefined || !visibleModels(registry, request.chatServeCaller).includes(found.model)) {
        throw new AgentNotFoundError("assistant", asked.assistantId);
      }
      // An assistant a client made is read through the project's `assistants:read`, as GET
      // /assistants/{id} is: another user's is not found. A model's own (its graph id) is every caller's.
      const auth = context.authenticator?.customAuth;
      if (found.custom !== undefined && auth !== undefined) {
        const { filters } = await auth.authorize(request, "assistants:read", { assistant_id: asked.assistantId });
        if (!matchesFilters(found.custom.metadata, filters)) throw new AgentNotFoundError("assistant", asked.assistantId);
      }
      if (asked.webhook !== undefined) await checkRunWebhook(asked.webhook, webhookPolicy, options.webhooks?.disabled === true);
      return { model: found.model, run: AgentAssistants.runOf(passHeaders(asked, request.headers), found) };
    },
  };
  const on = new RouteTable();
  on.get("/ok", async () => ({ ok: true }));
  on.get("/info", async () => ({
    version: options.version,
    flags: { assistants: true, crons: true, langsmith: false },
  }));
  registerAssistantRoutes(on, routes);
  registerThreadRoutes(on, routes);
  registerRunRoutes(on, routes);
  registerStoreRoutes(on, routes, registry.graphStore);
  registerCronRoutes(on, routes);
  const socket = registerProtocolRoutes(on, routes);
  // The deployment's thread time to live: idle threads go as a DELETE would take them.
  const sweep = async () => {
    const ttl = context.threadTtl;
    const [model] = registry.getGraphNames();
    if (ttl === undefined || model === undefined) return 0;
    return sweepExpiredThreads({
      records,
      coordinator: registry.coordinatorOf(model),
      ttl,
      backendTimeoutMs: context.backendTimeoutMs,
      deleteThread: (scope, threadId) => threads.delete(scope, threadId),
      keepLatest: (scope, threadId) => threads.keepLatest(scope, threadId),
      warn: (error, threadId) => app.log.warn({ err: error, threadId }, "could not delete a thread past its time to live"),
    });
  };
  /** A cron's firing: its run, on its thread or a new one; a cron whose assistant is gone is turned off, once. */
  const fireCron = async (cron: CronRecord) => {
    const found = await backendCall("the assistant records", context.backendTimeoutMs, () =>
      assistants.find(cron.scope, cron.assistant_id),
    );
    if (found === undefined) {
      const off = { ...cron, enabled: false, updated_at: new Date().toISOString() };
      await backendCall("the cron records", context.backendTimeoutMs, () => routes.crons.records.put(off));
      await options.cronScheduler.disarm(cron.scope, cron.cron_id);
      app.log.warn({ cronId: cron.cron_id, assistantId: cron.assistant_id }, "a cron's assistant is gone: the cron is turned off");
      context.metrics?.cronFired("stopped");
      return;
    }
    const completion = cron.thread_id === null ? { on_completion: cron.on_run_completed ?? "delete" } : {};
    const { request } = parseRunCreate({ ...cron.payload, ...completion, assistant_id: cron.assistant_id });
    const run = AgentAssistants.runOf({ ...request, metadata: { ...request.metadata, cron_id: cron.cron_id } }, found);
    try {
      await runs.startInBackground(cron.scope, cron.thread_id ?? undefined, run);
      context.metrics?.cronFired("started");
    } catch (error) {
      if (!(error instanceof AgentConflictError)) throw error;
      // Its thread is still running the last firing's run (or another): this firing is skipped (counted; logged once a minute).
      options.cronScheduler.skips.note(cron, "busy");
    }
  };
  return { table: on, runs, protocol: routes.protocol, socket, sweep, webhooks, fireCron };
}
