import { z } from "zod";
import type { RunWebhookPolicy, WebhookTarget } from "../background/webhooks.js";
import { type ApiKeyEntry, type Authenticate, apiKeyEntrySchema } from "../http/auth.js";
import type { CorsSettings } from "../http/cors.js";
import type { CheckpointScope } from "../http/run-request.js";
import type { AgentProtocolSettings } from "../surfaces/langgraph/langgraph-surface.js";
import { DEFAULT_BACKEND_TIMEOUT_MS } from "../util/deadline.js";
import { parseDuration } from "../util/duration.js";
import {
  agentProtocolSettingsSchema,
  corsSchema,
  type GraphStoreConfig,
  graphStoreSchema,
  type HttpConfig,
  httpSchema,
  type ThreadTtlConfig,
  uiConfigSchema,
  uiSchema,
} from "./agent-server-config.js";
import { checkpointerSchema, coordinatorSchema, durationSchema, limitSchema, storeSchema } from "./backend-config.js";
import { type Referable, valueOrReference } from "./config-values.js";
import { type GraphEntryConfig, graphEntrySchema } from "./graph-entry-config.js";
import type { LangGraphProject } from "./langgraph-json.js";

export type { ModuleReference } from "./config-values.js";
export type { GraphEntryConfig } from "./graph-entry-config.js";

export const configSchema = z.strictObject({
  server: z
    .strictObject({
      host: z.string().min(1).default("127.0.0.1"),
      port: z.int().min(0).max(65_535).default(8000),
      prefix: z.string().default("/v1"),
      docs: z.boolean().default(false),
      playground: z.boolean().optional(),
      mcp: z
        .union([
          z.boolean(),
          z.strictObject({
            sessions: z.boolean().optional(),
            maxSessions: z.int().min(1).optional(),
            maxSessionsPerTenant: z.int().min(1).optional(),
          }),
        ])
        .optional(),
      a2a: z.boolean().optional(),
      aiSdk: z.boolean().optional(),
      agUi: z.boolean().optional(),
      anthropic: z.boolean().optional(),
      langgraph: z.union([z.boolean(), agentProtocolSettingsSchema]).optional(),
      bodyLimit: z.int().positive().default(1_048_576),
      headersTimeoutMs: z.int().min(1_000).default(20_000),
      requestTimeoutMs: z.int().min(1_000).default(60_000),
      keepAliveTimeoutMs: z.int().min(1_000).default(72_000),
      shutdownGraceMs: z.int().min(0).max(3_600_000).default(10_000),
      stalledClientTimeoutMs: z.int().min(100).default(30_000),
      cors: corsSchema.optional(),
    })
    .prefault({}),
  auth: z
    .strictObject({
      keys: z.array(apiKeyEntrySchema).optional(),
      keysFile: z.string().min(1).optional(),
      authenticate: valueOrReference("a function").optional(),
      custom: valueOrReference("an Auth of @langchain/langgraph-sdk/auth").optional(),
      disableStudioAuth: z.boolean().optional(),
    })
    .refine(
      (auth) => auth.keys !== undefined || auth.keysFile !== undefined || auth.authenticate !== undefined || auth.custom !== undefined,
      { error: "needs keys, keysFile, authenticate or custom" },
    )
    .optional(),
  limits: limitSchema.extend({ perModel: z.record(z.string(), limitSchema).optional() }).optional(),
  http: httpSchema.optional(),
  graphStore: graphStoreSchema.optional(),
  ui: uiSchema.optional(),
  uiConfig: uiConfigSchema.optional(),
  metrics: z
    .strictObject({
      enabled: z.boolean().default(true),
      path: z
        .string()
        .regex(/^\/[\w./-]*$/u, "must be a path starting with /")
        .default("/metrics"),
      port: z.int().min(0).max(65_535).optional(),
      token: z.string().min(1).optional(),
    })
    .optional(),
  pendingRuns: z.strictObject({ expireAfter: durationSchema, sweepEvery: durationSchema.default("10m") }).optional(),
  profiles: z
    .strictObject({
      "chat-ui": z.strictObject({ prefix: z.string().min(1), answerTasks: z.boolean().default(true) }).optional(),
    })
    .optional(),
  presets: z
    .record(
      z.string().min(1),
      z.strictObject({
        from: z.string("is required: the model this preset runs").min(1),
        settings: z.record(z.string(), z.unknown()),
        description: z.string().trim().min(1).optional(),
      }),
    )
    .optional(),
  backendTimeoutMs: z.int().min(100).max(600_000).default(DEFAULT_BACKEND_TIMEOUT_MS),
  checkpointer: checkpointerSchema.default({ kind: "memory" }),
  store: storeSchema.optional(),
  background: z
    .strictObject({
      concurrency: z.int().min(1).max(1_000).default(4),
      takeoverAfter: durationSchema.default("30s"),
      keyPrefix: z
        .string()
        .min(1)
        .regex(/^[^:\s]+(:[^:\s]+)*$/u, "must be words joined by colons, like chat-serve or app:bg")
        .default("chat-serve"),
    })
    .optional(),
  webhooks: z
    .array(
      z.strictObject({
        url: z.string().regex(/^https?:\/\/\S+$/u, "must be an http(s) URL"),
        secret: z.string("is required: the signing secret (whsec_…)").min(1, "must not be empty"),
        events: z
          .array(z.enum(["response.completed", "response.failed", "response.cancelled", "response.incomplete"]))
          .min(1, "must name at least one event")
          .optional(),
        timeout: durationSchema.optional(),
      }),
    )
    .optional(),
  coordinator: coordinatorSchema.default({ kind: "memory" }),
  checkpointScope: valueOrReference("a function").optional(),
  graphs: z.record(z.string(), graphEntrySchema).refine((graphs) => Object.keys(graphs).length > 0, "must register at least one graph"),
});

export type ParsedConfig = z.output<typeof configSchema>;

/** The store a config describes, with its defaults. */
export type StoreConfig = NonNullable<ParsedConfig["store"]>;

/** The config's webhooks as the sender takes them: each `timeout` in milliseconds. */
export function webhookTargetsOf(config: Pick<ParsedConfig, "webhooks">): WebhookTarget[] {
  return (config.webhooks ?? []).map(({ timeout, ...target }) => ({
    ...target,
    ...(timeout === undefined ? {} : { timeoutMs: parseDuration(timeout)! }),
  }));
}

/** What a queued Agent Protocol run's `webhook` carries from a process without the surface (`chat-serve worker`). */
export function runWebhookPolicyOf(config: Pick<ParsedConfig, "server">): RunWebhookPolicy {
  const settings = config.server.langgraph;
  return typeof settings === "object" ? (settings.webhooks ?? {}) : {};
}

/**
 * The store a config uses: the one it names, or else beside the checkpoints (the same
 * Postgres database and schema), or else in memory.
 */

export function storeConfigOf(config: Pick<ParsedConfig, "checkpointer" | "store">): StoreConfig {
  if (config.store !== undefined) return config.store;
  const retention = { expireAfter: "30d", sweepEvery: "10m" };
  const { checkpointer } = config;
  return checkpointer.kind === "postgres"
    ? { kind: "postgres", url: checkpointer.url, schema: checkpointer.schema, ...retention }
    : { kind: "memory", ...retention };
}

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

/** The shape of `chat-serve.config.ts`. */
export interface ChatServeConfig {
  server?: {
    host?: string;
    port?: number;
    prefix?: string;
    docs?: boolean;
    /**
     * Serve the playground page at `{prefix}/playground`. Default: on when `chat-serve start`
     * listens on a loopback host (127.0.0.1, localhost, ::1), off otherwise.
     */
    playground?: boolean;
    /**
     * Serve every model as an MCP tool at `{prefix}/mcp`. Default: on where the playground is
     * (a loopback host). `{ sessions: false }` keeps no MCP sessions, for several hosts behind
     * a load balancer that does not route by `Mcp-Session-Id` (no elicitation then);
     * `start --workers` keeps none either.
     */
    mcp?: boolean | { sessions?: boolean; maxSessions?: number; maxSessionsPerTenant?: number };
    /**
     * Serve every model as an A2A agent under `{prefix}/a2a` (agent cards and JSON-RPC).
     * Default: on where the playground is (a loopback host). Its tasks are background runs.
     */
    a2a?: boolean;
    /** Serve every model to the AI SDK's `useChat` at `{prefix}/ai-sdk/{model}` (docs/ai-sdk.md). Default: on. */
    aiSdk?: boolean;
    /** Serve every model as an AG-UI 1.0 agent at `{prefix}/ag-ui/{model}` (docs/ag-ui.md). Default: on. */
    agUi?: boolean;
    /**
     * Serve every model through the Anthropic Messages API at `{prefix}/messages`, for Claude
     * Code (`ANTHROPIC_BASE_URL`) and the Anthropic SDKs (docs/anthropic.md). Default: on.
     */
    anthropic?: boolean;
    /**
     * Serve the LangGraph Agent Protocol (assistants, threads, runs, store) at the server root,
     * as `langgraph dev` does, or under `prefix`: `@langchain/langgraph-sdk`, `useStream` and
     * `RemoteGraph` work against it (docs/langgraph.md). Default: on. Protocol v2 is served over
     * server-sent events (the SDK's default) and over a WebSocket (`GET /threads/{id}/stream/events`,
     * for clients that choose that transport); `websocket: false` turns the WebSocket off. The
     * rest of `AgentProtocolSettings` are langgraph.json's `http` switches.
     */
    langgraph?: boolean | AgentProtocolSettings;
    bodyLimit?: number;
    /** How long a client may take to send its request headers. Default 20 s. */
    headersTimeoutMs?: number;
    /** How long a client may take to send its whole request, body included. Default 60 s. Never cuts a response. */
    requestTimeoutMs?: number;
    /** How long an idle keep-alive connection stays open between requests. Default 72 s. */
    keepAliveTimeoutMs?: number;
    /** How long open streams may finish after SIGTERM/SIGINT before they are ended. Default 10 s. */
    shutdownGraceMs?: number;
    /**
     * A client that reads nothing of a streamed answer for this long, once its connection's
     * buffers are full, is dropped and its run ended; until then the run waits for it. Default 30 s.
     */
    stalledClientTimeoutMs?: number;
    /** Browser origins allowed to call the API (CORS), and how: see `CorsSettings`. Default: none. */
    cors?: CorsSettings;
  };
  /**
   * API keys and tenants. Every route but `/health` then needs `Authorization: Bearer <key>`
   * (or `api-key: <key>`). Keys come from the environment or `keysFile` (a JSON array of the
   * same entries), in plain text (`key`) or as the hex SHA-256 of the key (`sha256`).
   */
  auth?: {
    keys?: ApiKeyEntry[];
    keysFile?: string;
    authenticate?: Referable<Authenticate>;
    /**
     * A LangGraph project's `Auth` (`new Auth()` of `@langchain/langgraph-sdk/auth`, or a
     * `"./auth.ts:auth"` reference), as `langgraph.json`'s `auth.path`: its `authenticate` says
     * who every request is, its handlers decide what each user sees on the Agent Protocol.
     */
    custom?: Referable<object>;
    /** LangGraph Studio's requests go through `langgraph`'s `authenticate` too (`disable_studio_auth`). */
    disableStudioAuth?: boolean;
  };
  /** A project's own routes beside chat-serve's (`langgraph.json`'s `http`): see `HttpConfig`. */
  http?: HttpConfig;
  /** LangGraph's store, which graphs read through `config.store` (`langgraph.json`'s `store`): see `GraphStoreConfig`. */
  graphStore?: GraphStoreConfig;
  /**
   * A graph's generative UI (`langgraph.json`'s `ui`): graph id → the file exporting its React
   * components, bundled at start and served at `POST /ui/{graph}` for `LoadExternalComponent`.
   */
  ui?: Record<string, string>;
  /** `langgraph.json`'s `ui_config`: `shared` packages the page provides, left out of the bundles. */
  uiConfig?: { shared?: string[] };
  /** Per-tenant limits; `perModel` gives a model limits (and counters) of its own. */
  limits?: {
    requestsPerMinute?: number;
    concurrentRuns?: number;
    perModel?: Record<string, { requestsPerMinute?: number; concurrentRuns?: number }>;
  };
  /** Prometheus metrics: on their own `port`, or under the API at `path` behind `token`. */
  metrics?: { enabled?: boolean; path?: string; port?: number; token?: string };
  /** The server deletes pending interrupt runs idle for longer than `expireAfter`, checking every `sweepEvery`. */
  pendingRuns?: { expireAfter: string; sweepEvery?: string };
  /** The same models for chat UIs (Open WebUI and the like) under a second prefix, in the `chat-ui` profile. */
  profiles?: { "chat-ui"?: { prefix: string; answerTasks?: boolean } };
  /** Models that run another model with fixed client settings: `{ "research-deep": { from: "research", settings: { depth: 5 } } }`. */
  presets?: Record<string, { from: string; settings: Record<string, unknown>; description?: string }>;
  /**
   * Deadline of every call to Redis or Postgres (lease, checkpoint read or write, readiness
   * check). Past it the request gets 503 `backend_unavailable`. Default 2 s.
   */
  backendTimeoutMs?: number;
  /**
   * Where stored responses, conversations and the turns of chat sessions are kept, and how
   * long (`expireAfter`, default 30 days since last use, checked every `sweepEvery`, default
   * 10 minutes). Default: beside a Postgres checkpointer when there is one, else memory: bounded (`maxResponses` 10,000, `maxConversations` and
   * `maxSessions` 1,000), gone at restart. Postgres: shared by every process and host.
   */
  store?:
    | { kind: "memory"; expireAfter?: string; sweepEvery?: string; maxResponses?: number; maxConversations?: number; maxSessions?: number }
    | { kind: "postgres"; url: string; schema?: string; expireAfter?: string; sweepEvery?: string };
  /**
   * Background responses: how many one process runs at once (default 4). With a Redis
   * coordinator they go through a queue every process shares (BullMQ, keys under
   * `keyPrefix`, default `chat-serve`), and a worker silent for `takeoverAfter` (default 30s)
   * loses its runs to another.
   */
  background?: { concurrency?: number; takeoverAfter?: string; keyPrefix?: string };
  /** Endpoints told when a background response ends, signed as OpenAI signs its webhooks. */
  webhooks?: {
    url: string;
    secret: string;
    events?: ("response.completed" | "response.failed" | "response.cancelled" | "response.incomplete")[];
    /** How long one delivery attempt waits for the receiver's answer (default `"10s"`), then counts as timed out and is retried. */
    timeout?: string;
  }[];
  /** Where interrupt graphs keep their checkpoints when they bring none. Default memory. */
  checkpointer?: ({ kind: "memory" } | { kind: "postgres"; url: string; schema?: string }) & { ttl?: ThreadTtlConfig };
  /** The run coordinator of interrupt graphs. Default memory (one process only). */
  coordinator?:
    | { kind: "memory" }
    | { kind: "redis"; url: string; leaseTtlMs?: number; keyPrefix?: string }
    | { kind: "postgres"; url: string; maxConcurrentLeases?: number; leaseTimeoutMs?: number };
  /**
   * The server-trusted isolation scope of interrupt checkpoints (sync or async), from an
   * authenticated tenant or principal; never from request metadata. Default `"default"`.
   */
  checkpointScope?: Referable<CheckpointScope>;
  graphs: Record<string, GraphEntryConfig>;
}

/**
 * Types a `chat-serve.config.ts` file. It returns its argument unchanged.
 *
 * @example
 * ```ts
 * import { defineConfig } from "chat-serve";
 * export default defineConfig({
 *   graphs: { echo: { graph: "./graphs/echo.ts:graph", description: "Echoes the last message" } },
 * });
 * ```
 */
export function defineConfig(config: ChatServeConfig): ChatServeConfig {
  return config;
}
