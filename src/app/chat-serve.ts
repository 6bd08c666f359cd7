import { createRequire } from "node:module";
import type { FastifyInstance } from "fastify";
import { BackgroundRuns } from "../background/background-runs.js";
import { MemoryEventLog } from "../background/event-log.js";
import { InProcessQueue } from "../background/job-queue.js";
import { WebhookSender } from "../background/webhooks.js";
import { ServerShuttingDownError } from "../errors/catalogue.js";
import { Authenticator } from "../http/auth.js";
import { registerCustomRoutes } from "../http/custom-routes.js";
import { normalizePrefix, readEnvSettings, tracingSettingsFromEnv } from "../http/env.js";
import { coordinatorChecks, registerReadiness } from "../http/health.js";
import { createHostApp, registerRootPointers, registerScrapeRoute } from "../http/host-app.js";
import { RunLimits } from "../http/limits.js";
import { MethodIndex } from "../http/method-index.js";
import type { ServerMetrics } from "../http/metrics.js";
import { chatServePlugin } from "../http/plugin.js";
import type { Surface } from "../http/surface.js";
import { GraphFeature } from "../registry/features.js";
import { GraphRegistry } from "../registry/graph-registry.js";
import { RunTracker } from "../runs/run-tracker.js";
import { assertTracingInstalled, TracingCallback } from "../tracing/tracing-callback.js";
import { DEFAULT_BACKEND_TIMEOUT_MS } from "../util/deadline.js";
import { type BindOptions, checkOptions } from "./bind-options.js";
import type { ChatServeOptions } from "./chat-serve-options.js";
import { type FetchOptions, fetchHandler, type HostOptions, nodeHandler, upgradeHandler } from "./host-handlers.js";
import { apiSurfaces, registerSideMounts } from "./surfaces.js";

export type { BindOptions } from "./bind-options.js";
export type { ChatServeOptions, SharedBackground } from "./chat-serve-options.js";

const { version: packageVersion } = createRequire(import.meta.url)("../../package.json") as { version: string };

const DEFAULT_BODY_LIMIT = 1_048_576;
const DEFAULT_BACKGROUND_CONCURRENCY = 4;
const DEFAULT_KEEP_ALIVE_MS = 15_000;
const DEFAULT_STALLED_CLIENT_MS = 30_000;

/**
 * Serves a graph registry as OpenAI-compatible chat-completions models on a fastify app.
 *
 * @example
 * ```ts
 * const serve = new ChatServe({ graphs: new GraphRegistry({ echo: { graph, description: "Echo" } }) });
 * const app = await serve.bind({ prefix: "/v1" });
 * await app.listen({ port: 8000 });
 * ```
 */
export class ChatServe {
  /** The host app: the one given, or the one chat-serve created. */
  readonly app: FastifyInstance;
  readonly registry: GraphRegistry;
  readonly #ownsApp: boolean;
  readonly #options: ChatServeOptions;
  readonly #runs = new RunTracker();
  #draining = false;
  readonly #authenticator: Authenticator | undefined;
  readonly #limits: RunLimits | undefined;
  #metrics: ServerMetrics | undefined;
  #openaiApp: FastifyInstance | undefined;
  #tracing: TracingCallback | undefined;
  #background: BackgroundRuns | undefined;
  #surfaces: readonly Surface[] = [];
  #bound: Promise<FastifyInstance> | undefined;

  constructor(options: ChatServeOptions) {
    if (!GraphRegistry.isRegistry(options?.graphs)) {
      throw new TypeError("ChatServe: 'graphs' must be a GraphRegistry");
    }
    this.registry = options.graphs;
    this.#options = options;
    this.#ownsApp = options.app === undefined;
    this.#authenticator = options.auth === undefined ? undefined : new Authenticator(options.auth);
    this.#limits = options.limits === undefined ? undefined : new RunLimits(options.limits);
    checkOptions(this.registry, options, [...(this.#authenticator?.namedModels ?? [])], [...(this.#limits?.namedModels ?? [])]);
    this.app = options.app ?? createHostApp(options.logger, options.httpTimeouts);
  }

  /** Mounts the service under the prefix and returns the host app, ready to listen. */
  bind(options: BindOptions = {}): Promise<FastifyInstance> {
    if (this.#bound !== undefined) return Promise.reject(new Error("ChatServe.bind() was already called"));
    this.#bound = this.#bind(options);
    return this.#bound;
  }

  async #bind(options: BindOptions): Promise<FastifyInstance> {
    const env = readEnvSettings();
    const prefix = options.prefix === undefined ? (env.prefix ?? "/v1") : normalizePrefix(options.prefix);
    const tracingSettings = this.#options.tracing === false ? undefined : (this.#options.tracing ?? tracingSettingsFromEnv(env));
    if (tracingSettings !== undefined) {
      await assertTracingInstalled();
      const tracing = new TracingCallback(tracingSettings);
      this.#tracing = tracing;
      this.app.addHook("onClose", () => tracing.shutdown());
    }
    const metricsSettings = this.#options.metrics;
    const settings = this.#options.background ?? {};
    const shared = "shared" in settings ? settings.shared : undefined;
    const queue = shared?.queue ?? new InProcessQueue();
    if (metricsSettings !== undefined) {
      // prom-client loads only when metrics are on.
      const { ServerMetrics } = await import("../http/metrics.js");
      const metrics = new ServerMetrics({
        runsInFlight: () => this.#runs.size,
        background: () => queue.counts(),
        pendingRuns: this.registry.getGraphNames().some((name) => this.registry.getGraph(name).features.has(GraphFeature.INTERRUPTS))
          ? () => this.registry.pendingRuns.count()
          : undefined,
        timeoutMs: this.#options.backendTimeoutMs ?? DEFAULT_BACKEND_TIMEOUT_MS,
      });
      this.#metrics = metrics;
      this.app.addHook("onClose", async () => metrics.close());
      if (metricsSettings.port === undefined) registerScrapeRoute(this.app, metrics, metricsSettings);
    }
    const backendTimeoutMs = this.#options.backendTimeoutMs ?? DEFAULT_BACKEND_TIMEOUT_MS;
    const readinessChecks = [
      { name: "graphs", check: () => this.registry.validateAll(), essential: true },
      ...coordinatorChecks(this.registry),
      ...(this.#options.readinessChecks ?? []),
    ];
    if (this.#ownsApp && prefix !== "") {
      // Load balancers, orchestrators and the client guides probe without the prefix, and without a key.
      this.app.get("/health", async () => ({ status: "ok" }));
      registerReadiness(this.app, "/ready", readinessChecks, backendTimeoutMs, () => this.#draining);
    }
    const switchContext = {
      models: this.registry.getGraphNames(),
      background: !("unavailable" in settings),
      version: packageVersion,
      env,
      ...(this.#options.uiBundles === undefined ? {} : { uiBundles: this.#options.uiBundles }),
    };
    const surfaces = apiSurfaces(options, switchContext);
    this.#surfaces = surfaces;
    // On an app chat-serve created, its not-found handler answers the wrong methods of root mounts.
    const hostMethods = this.#ownsApp ? new MethodIndex() : undefined;
    if (hostMethods !== undefined)
      registerRootPointers(
        this.app,
        prefix,
        surfaces.flatMap((surface) => surface.pointers ?? []),
        surfaces.flatMap((surface) => Object.keys(surface.methods ?? {})),
        hostMethods,
      );
    const webhooks =
      this.#options.webhooks === undefined || this.#options.webhooks.length === 0
        ? undefined
        : new WebhookSender(this.#options.webhooks, {
            log: this.app.log,
            ...(this.#metrics === undefined
              ? {}
              : {
                  observe: (outcome) => this.#metrics?.webhook(outcome),
                  observeAttempt: (outcome) => this.#metrics?.webhookAttempt(outcome),
                }),
          });
    if (webhooks !== undefined) this.app.addHook("onClose", async () => webhooks.close());
    const background =
      "unavailable" in settings
        ? undefined
        : new BackgroundRuns({
            registry: this.registry,
            queue,
            events: shared?.events ?? new MemoryEventLog(),
            ...(shared?.agentEvents === undefined ? {} : { agentEvents: shared.agentEvents }),
            ...(shared?.protocolLogs === undefined ? {} : { protocolLogs: shared.protocolLogs }),
            ...(shared === undefined
              ? {}
              : { resumable: shared.resumable, leaseWaitMs: shared.leaseWaitMs, leaseTtlMs: shared.leaseTtlMs }),
            runs: this.#runs,
            backendTimeoutMs: this.#options.backendTimeoutMs ?? DEFAULT_BACKEND_TIMEOUT_MS,
            concurrency: settings.concurrency ?? DEFAULT_BACKGROUND_CONCURRENCY,
            log: this.app.log,
            ...(webhooks === undefined ? {} : { webhooks }),
            ...(this.#metrics === undefined ? {} : { metrics: this.#metrics }),
          });
    this.#background = background;
    if (background !== undefined) this.app.addHook("onClose", () => background.close());
    const pluginOptions = {
      prefix,
      background,
      backgroundUnavailable: "unavailable" in settings ? settings.unavailable : undefined,
      registry: this.registry,
      checkpointScope: this.#options.checkpointScope,
      tracing: this.#tracing,
      runs: this.#runs,
      bodyLimit: this.#options.bodyLimit ?? DEFAULT_BODY_LIMIT,
      keepAliveMs: this.#options.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS,
      stalledClientMs: this.#options.stalledClientTimeoutMs ?? DEFAULT_STALLED_CLIENT_MS,
      socketIdleMs: this.#options.socketIdleMs ?? 300_000,
      backendTimeoutMs: this.#options.backendTimeoutMs ?? DEFAULT_BACKEND_TIMEOUT_MS,
      requestLog: this.#options.requestLog ?? true,
      developmentErrors: this.#options.developmentErrors === true,
      surfaces,
      authenticator: this.#authenticator,
      threadTtl: this.#options.threadTtl,
      limits: this.#limits,
      metrics: this.#metrics,
      cors: this.#options.cors,
      isDraining: () => this.#draining,
      hostRequestIds: this.#ownsApp,
      profile: "strict" as const,
      answerTasks: true,
      readinessChecks,
      hostMethods,
      onInstance: (instance: FastifyInstance) => {
        this.#openaiApp = instance;
      },
    };
    await this.app.register(chatServePlugin, pluginOptions);
    if (this.#options.customRoutes !== undefined && this.#ownsApp)
      registerCustomRoutes(this.app, this.#options.customRoutes, this.#authenticator, this.#options.cors !== undefined);
    this.#surfaces = [...surfaces, ...(await registerSideMounts(this.app, pluginOptions, options, switchContext))];
    // The queue is worked once every surface has said who runs its jobs.
    background?.start();
    return this.app;
  }

  /**
   * A Node `(request, response)` handler for Express (4 and 5), Connect and `node:http`:
   * `app.use("/ai", serve.nodeHandler())`. It serves chat-serve's own app (bound with
   * `bind()`'s defaults unless `bind()` was called first), which never listens itself.
   */
  nodeHandler(options?: HostOptions): ReturnType<typeof nodeHandler> {
    return nodeHandler(() => this.#hostReady(), options);
  }

  /** A Node `upgrade` listener for the WebSocket modes through a host's own server: `server.on("upgrade", …)`. */
  upgradeHandler(options?: HostOptions): ReturnType<typeof upgradeHandler> {
    return upgradeHandler(() => this.#hostReady(), options);
  }

  /**
   * Answers a web `Request` (Hono, Next.js route handlers, Bun, Deno) with a `Response` whose
   * body streams; cancelling it ends the run. `mountPath` is the path the host serves it under.
   */
  async fetch(request: Request, options?: FetchOptions): Promise<Response> {
    return fetchHandler(await this.#hostReady(), request, options);
  }

  /** Stops serving: every run and background worker ends, every connection closes. */
  async close(): Promise<void> {
    await this.app.close();
  }

  /** chat-serve's own app, bound and ready, for a host that is not fastify. */
  #hostReady(): Promise<FastifyInstance> {
    if (!this.#ownsApp) {
      return Promise.reject(new TypeError("nodeHandler() and fetch() serve chat-serve's own app: construct ChatServe without 'app'"));
    }
    return (this.#bound ?? this.bind()).then(async (app) => {
      await app.ready();
      return app;
    });
  }

  /** The surfaces the API mount serves (after `bind()`), in the order they were registered. */
  get surfaces(): readonly Surface[] {
    return this.#surfaces;
  }

  /** The mounted (encapsulated) fastify instance, for manual middleware or telemetry. */
  get openaiApp(): FastifyInstance {
    if (this.#openaiApp === undefined) throw new Error("ChatServe.openaiApp is available after bind()");
    return this.#openaiApp;
  }

  /** The metrics when they are on (after `bind()`): serve `scrape()` yourself for a port of their own. */
  get metrics(): ServerMetrics | undefined {
    return this.#metrics;
  }

  /** The tracing callback when tracing is on (for `flush()` in tests and shutdown hooks). */
  get tracing(): TracingCallback | undefined {
    return this.#tracing;
  }

  /** Runs in flight right now. */
  get activeRuns(): number {
    return this.#runs.size;
  }

  /** Resolves once no run is in flight. */
  runsSettled(): Promise<void> {
    return this.#runs.whenIdle();
  }

  /**
   * Starts draining before a stop: `{prefix}/ready` answers 503 and new runs get 503
   * `server_shutting_down` with `Retry-After`, while the runs in flight go on.
   */
  drain(): void {
    this.#draining = true;
    // Background responses still waiting for a worker will not get one: they end failed now,
    // saying why, while the store is up; those running go on like any run.
    this.#background?.drain();
  }

  /** True once `drain()` was called. */
  get draining(): boolean {
    return this.#draining;
  }

  /**
   * Ends every run in flight, used when a graceful shutdown runs out of time: each stream ends
   * with a `server_shutting_down` error frame, each complete request gets that 503, and their
   * leases are released.
   */
  abortRuns(): void {
    this.#runs.abortAll(new ServerShuttingDownError());
  }
}
