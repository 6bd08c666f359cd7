import type { FastifyInstance, FastifyServerOptions } from "fastify";
import type { BackgroundQueue } from "../background/job-queue.js";
import type { WebhookTarget } from "../background/webhooks.js";
import type { AuthSettings } from "../http/auth.js";
import type { CorsSettings } from "../http/cors.js";
import type { CustomRoutes } from "../http/custom-routes.js";
import type { ReadinessCheck } from "../http/health.js";
import type { HttpTimeouts } from "../http/host-app.js";
import type { LimitSettings } from "../http/limits.js";
import type { MetricsSettings } from "../http/metrics.js";
import type { CheckpointScope } from "../http/run-request.js";
import type { UiBundles } from "../http/surface.js";
import type { GraphRegistry } from "../registry/graph-registry.js";
import type { ProtocolLogs } from "../runs/agent/protocol-log.js";
import type { LoggedEvent } from "../runs/agent/run-events.js";
import type { ThreadTtl } from "../runs/agent/thread-sweeper.js";
import type { BackgroundEventLog } from "../runs/jobs.js";
import type { TracingSettings } from "../tracing/tracing-callback.js";

// What a ChatServe is made with: its graphs, where it mounts, its limits and policies, and the
// background queue and event logs it shares with the deployment's other processes.

export interface ChatServeOptions {
  /** A host fastify app to mount into. Absent: a new one is created. */
  app?: FastifyInstance;
  /** The graph registry. Required. */
  graphs: GraphRegistry;
  /**
   * Isolation scope of interrupt checkpoints, from an authenticated tenant or principal
   * (sync or async, non-empty). Default `"default"`: fine for single-tenant deployments only.
   */
  checkpointScope?: CheckpointScope;
  /** Logger options for the host app chat-serve creates (ignored with `app`). */
  logger?: FastifyServerOptions["logger"];
  /** Largest accepted chat request body in bytes (default 1 MiB). */
  bodyLimit?: number;
  /**
   * A graph's exception reaches Agent Protocol clients as its name and message, as under
   * `langgraphjs dev` (`chat-serve start` turns it on for a loopback server without keys).
   * Default false: clients get a sentence of chat-serve's, the log has the error.
   */
  developmentErrors?: boolean;
  /** Silence after which a stream gets a keep-alive comment (default 15 s). */
  keepAliveMs?: number;
  /**
   * A client that reads nothing of an answer for this long, once its connection's buffers are
   * full, is dropped and its run ended (default 30 s). Until then its run waits for it.
   */
  stalledClientTimeoutMs?: number;
  /** A Responses WebSocket with no response running and no message this long is closed (default 5 minutes). */
  socketIdleMs?: number;
  /** Deadline of every backend call this server makes itself, readiness checks included (default 2 s). */
  backendTimeoutMs?: number;
  /** Threads of the Agent Protocol idle past their time to live are deleted (`checkpointer.ttl`). */
  threadTtl?: ThreadTtl;
  /** Request timeouts of the host app chat-serve creates (ignored with `app`). */
  httpTimeouts?: HttpTimeouts;
  /** One log line per request at info level, when the app logs at all (default true). */
  requestLog?: boolean;
  /** Extra readiness checks reported by `{prefix}/ready`. */
  readinessChecks?: readonly ReadinessCheck[];
  /**
   * API keys and tenants: every route of the mounted app but `/health` (and the playground
   * and docs pages) needs a key of `keys` or a tenant from `authenticate`. Absent: no check.
   */
  auth?: AuthSettings;
  /** A project's own routes, at the root of an app chat-serve created (`http.app`). */
  customRoutes?: CustomRoutes;
  /** Each graph's generative UI, bundled (`chat-serve start` builds langgraph.json's `ui`), served beside the Agent Protocol. */
  uiBundles?: UiBundles;
  /** Per-tenant request rates and concurrent runs (per client address without `auth`), `perModel` overrides; `redis` shares the counters. */
  limits?: LimitSettings;
  /**
   * Prometheus metrics. Under the host app at `path` (default `/metrics`, behind `token` when
   * set), unless `port` asks for a port of its own, which whoever listens must serve (the CLI
   * does) from `ChatServe.metrics`.
   */
  metrics?: MetricsSettings;
  /** Browser origins allowed to call the API (CORS), like `https://app.example.com`: see `CorsSettings`. Default: none. */
  cors?: CorsSettings;
  /**
   * Background responses (`background: true`): how many this process runs at once (default
   * 4). They run in this process, from an in-memory queue, and do not survive a restart,
   * unless `shared` gives the queue and event log every process of the deployment uses.
   * `{ unavailable: reason }` refuses them, saying why.
   */
  background?: { concurrency?: number; shared?: SharedBackground } | { unavailable: string };
  /**
   * Endpoints told when a background response ends: OpenAI's webhook events
   * (`response.completed`, `.failed`, `.cancelled`, `.incomplete`), signed as OpenAI signs them.
   */
  webhooks?: readonly WebhookTarget[];
  /**
   * Langfuse tracing. Default: on when `SVC_ENABLE_TRACING` is true, with the `TRACING_*`
   * keys. `false` turns it off whatever the environment says; to use a custom handler, leave
   * tracing off and pass the handler in a graph's `runtimeCallbacks`.
   */
  tracing?: TracingSettings | false;
}

/** A queue and event log every process of a deployment shares (see `BullmqQueue`). */
export interface SharedBackground {
  queue: BackgroundQueue;
  events: BackgroundEventLog;
  /** The events of the Agent Protocol's background runs, for a join on any process. */
  agentEvents?: BackgroundEventLog<LoggedEvent>;
  /** Protocol v2's thread logs, for a command or a stream on any process. */
  protocolLogs?: ProtocolLogs;
  /** The deployment has a durable checkpointer: a run taken over goes on from its last step. */
  resumable: boolean;
  /** How long a run taken over waits for the lease its dead worker held (the lease's TTL and a margin). */
  leaseWaitMs?: number;
  /** A background run's leases expire this soon after its worker stops: the queue's takeover time. */
  leaseTtlMs?: number;
}
