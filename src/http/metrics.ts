import { randomUUID } from "node:crypto";
import diagnosticsChannel from "node:diagnostics_channel";
import { AggregatorRegistry, Counter, collectDefaultMetrics, Gauge, Histogram, Registry, type RegistryContentType } from "prom-client";
import { type BackendTiming, backendTimingChannel } from "../util/backend-timing.js";
import { withDeadline } from "../util/deadline.js";
import type { Usage } from "../wire/response.js";
import { CLUSTER_SCRAPE_REPLY, CLUSTER_SCRAPE_REQUEST, CLUSTER_WORKER_ENV } from "./cluster-scrape.js";

/** Where the Prometheus scrape is served, and who may read it. */
export interface MetricsSettings {
  /** Path of the scrape. Default `/metrics`. */
  path?: string;
  /** Serve the scrape on this port of its own (all interfaces of the server's host) rather than under the API. */
  port?: number;
  /** Under the API, a bearer token the scraper must send. */
  token?: string;
}

/** The API a request used, as the `api` label. */
/** A route's `api` label: one its surface declared (`chat.completions`, `mcp`…), or `other`. */
export type ApiLabel = string;

const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const BACKEND_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/**
 * The server's Prometheus metrics (prom-client), each with one owner: requests by model, API
 * and status; request duration and time to first token; tokens in and out from the usage the
 * responses report; runs in flight, open streams and pending interrupts; error codes; lease
 * and checkpointer latency; the default process metrics.
 */
export class ServerMetrics {
  readonly registry = new Registry();
  readonly #requests: Counter<"model" | "api" | "status">;
  readonly #duration: Histogram<"model" | "api">;
  readonly #firstToken: Histogram<"model" | "api">;
  readonly #tokens: Counter<"model" | "api" | "direction">;
  readonly #errors: Counter<"code">;
  readonly #openStreams: Gauge<"api">;
  readonly #backend: Histogram<"backend" | "operation">;
  readonly #onTiming: (message: unknown) => void;
  readonly #backgroundFinished: Counter<"model" | "status">;
  readonly #backgroundWait: Histogram<"model">;
  readonly #backgroundRun: Histogram<"model">;
  readonly #webhooks: Counter<"outcome">;
  readonly #webhookAttempts: Counter<"outcome">;
  readonly #cronFirings: Counter<"outcome">;
  readonly #delayedRuns: Counter;

  constructor(sources: {
    runsInFlight: () => number;
    pendingRuns?: () => Promise<number>;
    /** Background jobs waiting and running in this process. */
    background?: () => { waiting: number; running: number };
    timeoutMs: number;
  }) {
    const registers = [this.registry];
    // Under their usual names (process_*, nodejs_*), which dashboards expect.
    collectDefaultMetrics({ register: this.registry });
    this.#requests = new Counter({
      name: "chat_serve_requests_total",
      help: "Requests answered, by model, API and HTTP status.",
      labelNames: ["model", "api", "status"],
      registers,
    });
    this.#duration = new Histogram({
      name: "chat_serve_request_duration_seconds",
      help: "From the request's arrival to the end of its response (the whole stream for a stream).",
      labelNames: ["model", "api"],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.#firstToken = new Histogram({
      name: "chat_serve_time_to_first_token_seconds",
      help: "From the request's arrival to the first text of the answer.",
      labelNames: ["model", "api"],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.#tokens = new Counter({
      name: "chat_serve_tokens_total",
      help: "Tokens the runs' model calls reported, as the responses report them: in (prompt) and out (completion).",
      labelNames: ["model", "api", "direction"],
      registers,
    });
    this.#errors = new Counter({
      name: "chat_serve_errors_total",
      help: "Error answers and stream error frames, by error code (run_busy, backend_unavailable, rate_limit_exceeded, …).",
      labelNames: ["code"],
      registers,
    });
    this.#openStreams = new Gauge({ name: "chat_serve_open_streams", help: "Streams open right now.", labelNames: ["api"], registers });
    new Gauge({
      name: "chat_serve_runs_in_flight",
      help: "Graph runs in flight right now.",
      registers,
      collect() {
        this.set(sources.runsInFlight());
      },
    });
    if (sources.pendingRuns !== undefined) {
      const count = sources.pendingRuns;
      new Gauge({
        name: "chat_serve_pending_interrupts",
        help: "Interrupt runs waiting for an answer.",
        registers,
        async collect() {
          try {
            this.set(await withDeadline("pending-run count", sources.timeoutMs, count()));
          } catch {
            // The index is unreachable: the gauge keeps its last value; backend errors tell the rest.
          }
        },
      });
    }
    this.#backend = new Histogram({
      name: "chat_serve_backend_call_seconds",
      help: "Latency of lease and checkpointer calls.",
      labelNames: ["backend", "operation"],
      buckets: BACKEND_BUCKETS,
      registers,
    });
    this.#onTiming = (message) => {
      const timing = message as BackendTiming;
      this.#backend.observe({ backend: timing.backend, operation: timing.operation }, timing.seconds);
    };
    diagnosticsChannel.subscribe(backendTimingChannel.name, this.#onTiming);
    if (sources.background !== undefined) {
      const counts = sources.background;
      new Gauge({
        name: "chat_serve_background_runs",
        help: "Background responses queued and running in this process right now.",
        labelNames: ["state"],
        registers,
        collect() {
          const { waiting, running } = counts();
          this.set({ state: "queued" }, waiting);
          this.set({ state: "running" }, running);
        },
      });
    }
    this.#backgroundFinished = new Counter({
      name: "chat_serve_background_finished_total",
      help: "Background responses that ended, by model and status (completed, incomplete, failed, cancelled).",
      labelNames: ["model", "status"],
      registers,
    });
    this.#backgroundWait = new Histogram({
      name: "chat_serve_background_queue_wait_seconds",
      help: "From a background response's queueing to the start of its run.",
      labelNames: ["model"],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.#backgroundRun = new Histogram({
      name: "chat_serve_background_run_seconds",
      help: "From the start of a background response's run to its end.",
      labelNames: ["model"],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.#webhooks = new Counter({
      name: "chat_serve_webhook_deliveries_total",
      help: "Webhook deliveries: delivered, or failed after every retry.",
      labelNames: ["outcome"],
      registers,
    });
    this.#webhookAttempts = new Counter({
      name: "chat_serve_webhook_attempts_total",
      help: "Webhook delivery attempts by what each was: delivered, rejected (a status other than 2xx), timed_out (no answer in time), unreachable.",
      labelNames: ["outcome"],
      registers,
    });
    this.#cronFirings = new Counter({
      name: "chat_serve_cron_firings_total",
      help: "Agent Protocol cron firings by what each did: started (its run), skipped (its thread was busy), missed (due while the server was behind: never made), stopped (its assistant is gone).",
      labelNames: ["outcome"],
      registers,
    });
    this.#delayedRuns = new Counter({
      name: "chat_serve_delayed_runs_total",
      help: "Agent Protocol runs created to start later (after_seconds).",
      registers,
    });
  }

  /** A cron fired (or `firings` of it were skipped or missed). */
  cronFired(outcome: "started" | "skipped" | "missed" | "stopped", firings = 1): void {
    this.#cronFirings.inc({ outcome }, firings);
  }

  /** A run was made to start later. */
  delayedRun(): void {
    this.#delayedRuns.inc();
  }

  /** A background response started its run, after waiting in the queue. */
  backgroundStarted(model: string, waitSeconds: number): void {
    this.#backgroundWait.observe({ model }, waitSeconds);
  }

  /** A background response ended. */
  backgroundEnded(model: string, status: string, runSeconds: number | undefined): void {
    this.#backgroundFinished.inc({ model, status });
    if (runSeconds !== undefined) this.#backgroundRun.observe({ model }, runSeconds);
  }

  webhook(outcome: "delivered" | "failed"): void {
    this.#webhooks.inc({ outcome });
  }

  webhookAttempt(outcome: string): void {
    this.#webhookAttempts.inc({ outcome });
  }

  /** A request ended; `run`: it was a request that runs a graph, whose duration is observed. */
  requestEnded(labels: { model: string; api: ApiLabel; status: number }, seconds: number, run = false): void {
    this.#requests.inc({ model: labels.model, api: labels.api, status: String(labels.status) });
    if (run) this.#duration.observe({ model: labels.model, api: labels.api }, seconds);
  }

  firstToken(labels: { model: string; api: ApiLabel }, seconds: number): void {
    this.#firstToken.observe(labels, seconds);
  }

  tokens(labels: { model: string; api: ApiLabel }, usage: Usage | undefined): void {
    if (usage === undefined) return;
    this.#tokens.inc({ ...labels, direction: "in" }, usage.prompt_tokens);
    this.#tokens.inc({ ...labels, direction: "out" }, usage.completion_tokens);
  }

  error(code: string): void {
    this.#errors.inc({ code });
  }

  streamOpened(api: ApiLabel): void {
    this.#openStreams.inc({ api });
  }

  streamClosed(api: ApiLabel): void {
    this.#openStreams.dec({ api });
  }

  /**
   * The scrape, in Prometheus text format. In a worker of `start --workers`, the whole
   * cluster's, summed by the primary with prom-client's aggregator.
   */
  async scrape(): Promise<{ contentType: string; body: string }> {
    if (process.env[CLUSTER_WORKER_ENV] === "1" && process.send !== undefined) {
      return { contentType: this.registry.contentType, body: await askPrimary() };
    }
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /** In a cluster worker: lets the primary's aggregator read this registry. */
  joinCluster(): void {
    // Making an aggregator is what installs prom-client's worker listener.
    aggregator();
    AggregatorRegistry.setRegistries([this.registry]);
  }

  close(): void {
    diagnosticsChannel.unsubscribe(backendTimingChannel.name, this.#onTiming);
  }
}

/** How long a worker waits for the primary's summed scrape. */
const CLUSTER_SCRAPE_TIMEOUT_MS = 5_000;

/** Asks the primary for the whole cluster's metrics. */
function askPrimary(): Promise<string> {
  const id = randomUUID();
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      process.off("message", onMessage);
      reject(new Error(`the cluster's metrics did not arrive within ${CLUSTER_SCRAPE_TIMEOUT_MS} ms`));
    }, CLUSTER_SCRAPE_TIMEOUT_MS);
    const onMessage = (message: unknown) => {
      const reply = message as { type?: string; id?: string; body?: string; error?: string };
      if (reply?.type !== CLUSTER_SCRAPE_REPLY || reply.id !== id) return;
      clearTimeout(timer);
      process.off("message", onMessage);
      if (reply.error !== undefined) reject(new Error(reply.error));
      else resolve(reply.body ?? "");
    };
    process.on("message", onMessage);
    process.send!({ type: CLUSTER_SCRAPE_REQUEST, id });
  });
}

/**
 * In the primary of `start --workers`: answers workers' scrape requests with the summed
 * metrics of every worker (prom-client's cluster aggregator).
 */
export async function clusterMetricsText(): Promise<{ contentType: string; body: string }> {
  const registry = aggregator();
  return { contentType: registry.contentType, body: await registry.clusterMetrics() };
}

let clusterAggregator: AggregatorRegistry<RegistryContentType> | undefined;

/** The one aggregator of this process; making it installs prom-client's cluster listeners. */
function aggregator(): AggregatorRegistry<RegistryContentType> {
  clusterAggregator ??= new AggregatorRegistry();
  return clusterAggregator;
}
