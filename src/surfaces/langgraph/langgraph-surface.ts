import type { HTTPMethods } from "fastify";
import type { RunWebhookPolicy } from "../../background/run-webhooks.js";
import { normalizePrefix } from "../../http/env.js";
import { registerLazyRoutes } from "../../http/lazy-routes.js";
import { parseJsonBody } from "../../http/plugin.js";
import type { Surface, SurfaceSwitch, UiBundles } from "../../http/surface.js";
import { acceptUpgrades, isUpgrade, openWebSocket } from "../../http/websocket-upgrade.js";
import { protocolJson } from "../../runs/agent/agent-graph.js";
import type { AgentRuns } from "../../runs/agent/agent-runs.js";
import type { ProtocolThreads } from "../../runs/agent/protocol-threads.js";
import type { AgentRecords } from "../../store/agent-records.js";
import type { CronRecord } from "../../store/cron-records.js";
import { wireCrons } from "./cron-wiring.js";
import type { ProtocolSocketDeps } from "./protocol-socket.js";
import { registerUiRoutes, UI_METHODS, UI_PUBLIC_PATHS } from "./ui-routes.js";

/**
 * `server.langgraph` in a config: the Agent Protocol's place (`prefix`, langgraph.json's
 * `mount_prefix`), `websocket`, route groups removed (`disableAssistants`, `disableThreads`,
 * `disableRuns`, which takes protocol v2 with it, `disableStore`, `disableMeta`: `/ok` and
 * `/info`), and which request headers a run finds in `config.configurable` (`configurableHeaders`).
 */
export interface AgentProtocolSettings {
  prefix?: string;
  websocket?: boolean;
  disableAssistants?: boolean;
  disableThreads?: boolean;
  disableRuns?: boolean;
  disableStore?: boolean;
  disableMeta?: boolean;
  /**
   * The request headers a run gets in `config.configurable` (names, or patterns with `*`).
   * Default, as LangGraph's server: every `x-*` header but `x-api-key`, `x-tenant-id` and
   * `x-service-key`, and `user-agent`. `includes` replaces the default; `excludes` wins over both.
   */
  configurableHeaders?: { includes?: string[]; excludes?: string[] };
  /** Runs may not ask for a webhook (`http.disable_webhooks`). */
  disableWebhooks?: boolean;
  /** What a run's `webhook` may call, and the headers it carries (langgraph.json's `webhooks`). */
  webhooks?: RunWebhookPolicy;
  /** The most enabled crons one tenant (one user under a project's `Auth`) may have; default 100. */
  maxCronsPerTenant?: number;
  /** Each graph's generative UI, bundled (langgraph.json's `ui`), served at `/ui/{graph}`. */
  ui?: UiBundles;
}

/** `server.langgraph` as a bind takes it: on, where, and what of it. */
export interface LangGraphBindSettings extends Omit<AgentProtocolSettings, "prefix" | "websocket"> {
  /** Where the protocol is served; default `""`, the server root, as `langgraph dev` serves it. */
  prefix?: string;
  /** Where threads and runs are recorded. Default: in this process's memory. */
  records?: AgentRecords;
  /**
   * Protocol v2 over a WebSocket too (`GET /threads/{id}/stream/events`); default true. The
   * WebSocket library loads with the first socket, so it costs a start nothing.
   */
  websocket?: boolean;
}

const RUNS = [
  ...["/threads/:thread_id/runs", "/runs"].flatMap((path) => [path, `${path}/stream`, `${path}/wait`]),
  "/threads/:thread_id/commands",
];

const METHODS: Record<string, readonly HTTPMethods[]> = {
  "/ok": ["GET"],
  "/info": ["GET"],
  "/assistants": ["POST"],
  "/assistants/search": ["POST"],
  "/assistants/count": ["POST"],
  "/assistants/:assistant_id": ["GET", "PATCH", "DELETE"],
  "/assistants/:assistant_id/latest": ["POST"],
  "/assistants/:assistant_id/versions": ["POST"],
  "/assistants/:assistant_id/graph": ["GET"],
  "/assistants/:assistant_id/schemas": ["GET"],
  "/assistants/:assistant_id/subgraphs/:namespace?": ["GET"],
  "/threads": ["POST"],
  "/threads/search": ["POST"],
  "/threads/count": ["POST"],
  "/threads/prune": ["POST"],
  "/threads/:thread_id": ["GET", "PATCH", "DELETE"],
  "/threads/:thread_id/copy": ["POST"],
  "/threads/:thread_id/state": ["GET", "POST"],
  "/threads/:thread_id/state/:checkpoint_id": ["GET"],
  "/threads/:thread_id/state/checkpoint": ["POST"],
  "/threads/:thread_id/history": ["GET", "POST"],
  "/threads/:thread_id/runs": ["GET", "POST"],
  "/threads/:thread_id/runs/stream": ["POST"],
  "/threads/:thread_id/runs/wait": ["POST"],
  "/threads/:thread_id/runs/:run_id": ["GET", "DELETE"],
  "/threads/:thread_id/runs/:run_id/join": ["GET"],
  "/threads/:thread_id/runs/:run_id/stream": ["GET"],
  "/threads/:thread_id/runs/:run_id/cancel": ["POST"],
  "/runs": ["POST"],
  "/runs/stream": ["POST"],
  "/runs/wait": ["POST"],
  "/store/items": ["GET", "PUT", "DELETE"],
  "/store/items/search": ["POST"],
  "/store/namespaces": ["POST"],
  "/runs/crons": ["POST"],
  "/threads/:thread_id/runs/crons": ["POST"],
  "/runs/crons/search": ["POST"],
  "/runs/crons/count": ["POST"],
  "/runs/crons/:cron_id": ["PATCH", "DELETE"],
  "/threads/:thread_id/commands": ["POST"],
  "/threads/:thread_id/stream/events": ["GET", "POST"],
};

/** Protocol v2's WebSocket: registered on its own (it upgrades before the engine loads). */
const SOCKET = "/threads/:thread_id/stream/events";

/** The route group a path is in, as langgraph.json's `http.disable_*` switches name them (protocol v2 with the runs). */
function groupOf(path: string): "meta" | "assistants" | "threads" | "runs" | "store" {
  if (path === "/ok" || path === "/info") return "meta";
  if (path.startsWith("/assistants")) return "assistants";
  if (path.startsWith("/store")) return "store";
  if (path.startsWith("/runs") || /^\/threads\/:thread_id\/(runs|commands|stream)/u.test(path)) return "runs";
  return "threads";
}

/** The routes served: every group but those the settings turn off. */
function servedMethods(settings: LangGraphBindSettings): Record<string, readonly HTTPMethods[]> {
  const off = {
    meta: settings.disableMeta,
    assistants: settings.disableAssistants,
    threads: settings.disableThreads,
    runs: settings.disableRuns,
    store: settings.disableStore,
  };
  return Object.fromEntries(Object.entries(METHODS).filter(([path]) => off[groupOf(path)] !== true));
}

/**
 * The LangGraph Agent Protocol (assistants, threads, runs, store), as `langgraph dev` serves
 * it: `@langchain/langgraph-sdk`, `useStream`, `RemoteGraph` and agent-chat-ui work against it
 * unchanged. Mounted on its own (at the server root by default), with errors in the
 * protocol's `{"detail": …}` shape.
 */
function langgraphSurface(settings: LangGraphBindSettings & { version: string }): Surface {
  const prefix = settings.prefix ?? "";
  const engineMethods = servedMethods(settings);
  const socketServed = engineMethods[SOCKET] !== undefined;
  /** The routes whose handlers load with the engine: all but the socket's GET. */
  const lazy: Record<string, readonly HTTPMethods[]> = { ...engineMethods, ...(socketServed ? { [SOCKET]: ["POST"] } : {}) };
  const ui = settings.ui !== undefined && settings.ui.size > 0 ? settings.ui : undefined;
  const methods: Record<string, readonly HTTPMethods[]> = { ...engineMethods, ...(ui === undefined ? {} : UI_METHODS) };
  return {
    name: "langgraph",
    register: async (app, context) => {
      // Messages in replies as the protocol writes them (`{ type, content, … }`), not LangChain's
      // constructor form: set first, as each route takes the serializer set when it is made.
      app.setReplySerializer((payload) => protocolJson(payload));
      // JSON sent as text/plain (LangGraph Studio's requests, a browser's simple requests) is read
      // as JSON, as LangGraph's server reads it.
      app.addContentTypeParser("text/plain", { parseAs: "string" }, (_request, body, done) => {
        try {
          done(null, parseJsonBody(body as string));
        } catch (error) {
          done(error as Error, undefined);
        }
      });
      const startedAt = new Date().toISOString();
      let runs: AgentRuns | undefined;
      let protocol: ProtocolThreads | undefined;
      let socket: ProtocolSocketDeps | undefined;
      let sweep: (() => Promise<number>) | undefined;
      let webhooks: { close(): void } | undefined;
      let fireCron: ((cron: CronRecord) => Promise<void>) | undefined;
      // Crons fire from start (their runs load the engine).
      const cronScheduler = wireCrons(app, context, async () => {
        await routes.load();
        return fireCron!;
      });
      // The engine and its schemas load on the first request to the protocol.
      const routes = registerLazyRoutes(app, lazy, async () => {
        const loaded = (await import("./langgraph-routes.js")).langGraphRoutes(app, context, {
          cronScheduler: await cronScheduler(),
          version: settings.version,
          startedAt,
          ...(settings.records === undefined ? {} : { records: settings.records }),
          ...(settings.configurableHeaders === undefined ? {} : { configurableHeaders: settings.configurableHeaders }),
          webhooks: { policy: settings.webhooks ?? {}, disabled: settings.disableWebhooks === true },
          ...(settings.maxCronsPerTenant === undefined ? {} : { maxCronsPerTenant: settings.maxCronsPerTenant }),
        });
        runs = loaded.runs;
        sweep = loaded.sweep;
        webhooks = loaded.webhooks;
        fireCron = loaded.fireCron;
        protocol = loaded.protocol;
        socket = loaded.socket;
        return loaded.table.only(lazy);
      });
      // A graph's generative UI needs no engine: its bundles were built at start.
      if (ui !== undefined) registerUiRoutes(app, ui);
      // Protocol v2 over a WebSocket: upgraded after the mount's hooks (keys, limits, request ids).
      const websocket = settings.websocket !== false;
      if (websocket && socketServed) acceptUpgrades(app, [SOCKET]);
      if (socketServed)
        app.get<{ Params: { thread_id: string } }>(SOCKET, async (request, reply) => {
          const { upgradeRequired, serveProtocolSocket } = await import("./protocol-socket.js");
          if (!websocket || !isUpgrade(request)) throw upgradeRequired(request.params.thread_id, websocket);
          const connection = await openWebSocket(request, reply, 1024 * 1024);
          if (connection === undefined) return reply;
          // Nothing the client sends while the engine loads is lost.
          const messages: string[] = [];
          const collect = (data: unknown, isBinary: boolean) => messages.push(isBinary ? "" : String(data));
          connection.on("message", collect);
          await routes.load();
          await serveProtocolSocket(connection, request, socket!, { messages, stop: () => connection.off("message", collect) });
          return reply;
        });
      // Runs queued on the deployment's shared queue are worked by this engine, loaded for the first one.
      context.background?.handleAgentRuns(async () => {
        await routes.load();
        return runs!;
      });
      // Threads past their time to live, swept on a timer of this surface's (the engine loads for the first sweep).
      const ttl = context.threadTtl;
      let sweeping: Promise<unknown> | undefined;
      const sweeper =
        ttl === undefined
          ? undefined
          : setInterval(() => {
              sweeping ??= routes
                .load()
                .then(() => sweep?.())
                .catch((error: unknown) => app.log.warn({ err: error }, "the sweep of threads past their time to live failed"))
                .finally(() => {
                  sweeping = undefined;
                });
            }, ttl.sweepIntervalMs);
      sweeper?.unref();
      // Protocol v2's event streams stay open while a client follows its thread: they end first.
      app.addHook("preClose", async () => protocol?.close());
      app.addHook("onClose", async () => {
        clearInterval(sweeper);
        await sweeping;
        // A first request may still be loading the engine: its runs end too.
        await routes.loaded()?.catch(() => undefined);
        protocol?.close();
        await runs?.close();
        webhooks?.close();
      });
    },
    methods,
    apiLabels: Object.fromEntries(Object.keys(methods).map((path) => [path, "langgraph"])),
    publicPaths: ["/ok", "/info", ...UI_PUBLIC_PATHS].filter((path) => methods[path] !== undefined),
    runPaths: RUNS.filter((path) => methods[path] !== undefined),
    errorBody: (error) => ({ detail: error.message }),
    bannerRows: (_base, address) => [
      [
        "langgraph",
        `${address}${prefix}  (LangGraph Agent Protocol: the SDK, useStream, RemoteGraph${settings.websocket === false ? "" : "; protocol v2 over SSE or WebSocket"})`,
      ],
    ],
  };
}

/** Where the protocol is served: `prefix`, checked, or the server root. */
function ownPrefix(setting: LangGraphBindSettings | true): string {
  const prefix = setting === true ? undefined : setting.prefix;
  return prefix === undefined || prefix === "" ? "" : normalizePrefix(prefix, "server.langgraph.prefix");
}

/**
 * `server.langgraph` / `bind({ langgraph })`: on for `start` unless the config turns it off,
 * off for `bind()` unless asked. A worker of `--workers` (whose requests any worker may take)
 * serves it when the deployment shares its threads, runs and their events (`place.shared`);
 * otherwise they would live in one worker only, and it is off.
 */
export const langgraphSwitch: SurfaceSwitch<"langgraph", LangGraphBindSettings> = {
  key: "langgraph",
  fromConfig: (value, { isWorker, shared }) => {
    if (value === false || (isWorker && !shared)) return false;
    if (typeof value !== "object" || value === null) return {};
    // Only what is set: a key left out keeps its default.
    return Object.fromEntries(Object.entries(value as LangGraphBindSettings).filter(([, setting]) => setting !== undefined));
  },
  bindDefault: () => false,
  offNote: ({ isWorker, shared }) =>
    isWorker && !shared
      ? 'off with --workers: each worker would keep its own threads and runs. Share them (store and checkpointer { kind: "postgres" }, coordinator { kind: "redis" }) to serve it from every worker'
      : undefined,
  ownPrefix,
  surfaces: (setting, { version, uiBundles }) => [
    langgraphSurface({
      ...(uiBundles === undefined ? {} : { ui: uiBundles }),
      ...(setting === true ? {} : setting),
      prefix: ownPrefix(setting),
      version,
    }),
  ],
};
