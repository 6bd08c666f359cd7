import cluster from "node:cluster";
import path from "node:path";
import chalk from "chalk";
import { ChatServe } from "../../app/chat-serve.js";
import { apiSurfaces, offNotes, ownMountSurfaces, switchSettings } from "../../app/surfaces.js";
import { storeConfigOf, webhookTargetsOf } from "../../config/define-config.js";
import { findConfigFile, loadConfig } from "../../config/load-config.js";
import { ConfigError, UserError } from "../../errors/developer-errors.js";
import { firstLine } from "../../errors/first-line.js";
import { isChatServeError } from "../../errors/serve-error.js";
import { normalizePrefix, readEnvSettings, tracingSettingsFromEnv } from "../../http/env.js";
import { GraphFeature } from "../../registry/features.js";
import type { ThreadTtl } from "../../runs/agent/thread-sweeper.js";
import { serverSetupFromConfig } from "../../server/from-config.js";
import { PendingRunSweeper } from "../../server/pending-run-sweeper.js";
import { StoreSweeper } from "../../server/store-sweeper.js";
import { uiBundlesFromConfig } from "../../server/ui-bundles.js";
import { assertTracingInstalled } from "../../tracing/tracing-callback.js";
import { parseDuration } from "../../util/duration.js";
import { backgroundSetup } from "../background-setup.js";
import { banner, isLoopback } from "../banner.js";
import { loggerOptions } from "../logger-options.js";
import { modelRows, renderModelTable } from "../model-table.js";
import { langGraphNote, redactUrl } from "../output.js";
import { onStopSignal, WATCHED_CHILD } from "../signals.js";

export interface StartOptions {
  config?: string;
  host?: string;
  port?: string;
  prefix?: string;
  workers?: string;
  logLevel?: string;
  quiet?: boolean;
}

/** How long finished responses get to flush their last bytes before connections are closed. */
const FLUSH_MS = 500;

function parsePort(value: string, source: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new UserError(`${source} must be a whole number from 0 to 65535 (got '${value}')`);
  }
  return port;
}

function parseWorkers(value: string | undefined): number {
  if (value === undefined) return 1;
  const workers = Number(value);
  if (!Number.isInteger(workers) || workers < 1 || workers > 256) {
    throw new UserError(`--workers must be a whole number from 1 to 256 (got '${value}')`);
  }
  return workers;
}

/** Why a backend could not be reached, in words a newcomer can act on. */
function backendReason(error: unknown): string {
  const code = (error as { code?: string }).code;
  const message = firstLine(error);
  if (code === "ECONNREFUSED" || /isn't writeable|Connection is closed/u.test(message)) {
    return "no connection: nothing answers at that address (is the service running, and is the port right?)";
  }
  if (code === "ENOTFOUND") return "the host name does not resolve";
  if (/did not answer within|timeout/iu.test(message)) return `no answer in time (${message})`;
  if (/user name/u.test(message)) return `${message}: put the user in the URL, like postgres://user@host:5432/db`;
  return message;
}

/**
 * `chat-serve start`: validate the config and the backends, print the model table, listen,
 * shut down gracefully. With `--workers N`, the first process validates and sets up the
 * backends once, then runs N workers behind one port.
 */
export async function startCommand(options: StartOptions): Promise<void> {
  const env = readEnvSettings();
  // Refuse a tracing setup without its keys or its packages before loading anything else.
  if (tracingSettingsFromEnv(env) !== undefined) await assertTracingInstalled();
  const workers = parseWorkers(options.workers);
  const logger = loggerOptions(options.logLevel);
  const isWorker = cluster.isWorker;
  // A first line before the graphs load (a project's modules may take seconds to import).
  const found = isWorker ? undefined : findConfigFile(options.config);
  if (found !== undefined) {
    process.stdout.write(
      `${chalk.bold("chat-serve")} ${chalk.dim(`config ${path.relative(process.cwd(), found) || found}, loading its graphs…`)}\n`,
    );
  }
  const loaded = await loadConfig({ configPath: options.config });
  // Connection errors are logged by the server once it exists; they never end the process.
  let logConnectionError: (backend: string, error: Error) => void = () => {};
  const { registry, backends, checkpointScope, auth, limits, customRoutes } = await serverSetupFromConfig(loaded, {
    onConnectionError: (backend, error) => logConnectionError(backend, error),
  });
  // Each graph's generative UI, bundled before anything listens: one that does not build stops the start.
  const uiBundles = await uiBundlesFromConfig(loaded).catch(async (error: unknown) => {
    await backends.close();
    throw error;
  });
  const { server } = loaded.config;
  // Precedence: flag > environment > config file > default.
  const prefix = normalizePrefix(options.prefix ?? env.prefix ?? server.prefix, options.prefix ? "--prefix" : "prefix");
  const host = options.host ?? (process.env.HOST || undefined) ?? server.host;
  const portText = options.port ?? (process.env.PORT || undefined);
  const port = portText === undefined ? server.port : parsePort(portText, options.port === undefined ? "PORT" : "--port");
  const metricsSettings = loaded.config.metrics?.enabled === true ? loaded.config.metrics : undefined;

  if (!isWorker) {
    // Only a graph that keeps state between requests (interrupts, threads) needs it shared.
    const keepsState = [];
    for (const name of registry.getGraphNames()) {
      if (registry.getGraph(name).features.has(GraphFeature.INTERRUPTS) || (await registry.isStateful(name))) keepsState.push(name);
    }
    if (workers > 1 && keepsState.length > 0 && (!backends.durable || !backends.distributed)) {
      await backends.close();
      throw new UserError(
        `--workers ${workers}: model '${keepsState[0]}' keeps state between requests (interrupts or threads), which the processes must share: set checkpointer to { kind: "postgres" } and coordinator to redis or postgres in ${loaded.langgraphJson === undefined ? loaded.displayPath : "a chat-serve.config.ts ('chat-serve init --from langgraph.json' writes one)"}`,
      );
    }
    const { checkpointer, coordinator } = loaded.config;
    const reach = async (what: string, url: string, key: string, step: () => Promise<void>) => {
      try {
        await step();
      } catch (error) {
        await backends.close();
        // A mistake of the config found there (a semantic store without pgvector) says so itself.
        if (isChatServeError(error, ConfigError)) throw error;
        throw new UserError(`cannot reach the ${what} at ${redactUrl(url)} (${loaded.displayPath}: ${key}): ${backendReason(error)}`);
      }
    };
    const store = storeConfigOf(loaded.config);
    if (checkpointer.kind === "postgres") {
      await reach("Postgres checkpointer", checkpointer.url, "checkpointer.url", async () => {
        await backends.setup();
        await backends.checkpointerCheck?.();
      });
    } else if (store.kind === "postgres") {
      await reach("Postgres store", store.url, "store.url", async () => {
        await backends.setup();
        await backends.store.check();
      });
    }
    if (coordinator.kind !== "memory") {
      const what = coordinator.kind === "redis" ? "Redis coordinator" : "Postgres coordinator";
      await reach(what, coordinator.url, "coordinator.url", async () => backends.runCoordinator.check?.());
    }
    const note = langGraphNote(loaded);
    if (note !== undefined) process.stdout.write(`${note}\n`);
    process.stdout.write(`${renderModelTable(modelRows(registry))}\n`);
    if (workers > 1) {
      if (!backends.store.durable) {
        process.stdout.write(
          `${chalk.yellow("note")} each of the ${workers} workers keeps its own stored responses and background runs in memory: a request naming one (previous_response_id, retrieve, cancel) may reach another worker and get 404. store: { kind: "postgres" } shares them.\n`,
        );
      }
      // The workers print nothing: the primary's banner says what each of them serves.
      const setup = await backgroundSetup(loaded, backends, { warn: () => {} });
      if (setup.kind === "shared") await setup.shared.queue.close();
      await backends.close();
      const place = { loopback: isLoopback(host), isWorker: true, shared: sharesRuns(setup, backends), env };
      const selection = switchSettings(server, place);
      const context = { models: registry.getGraphNames(), background: setup.kind !== "unavailable", version: "", env };
      const surfaces = [...apiSurfaces(selection, context), ...ownMountSurfaces(selection, context)];
      const describe = (address: string) =>
        banner({
          address,
          prefix,
          host,
          surfaces,
          offNotes: offNotes(selection, place),
          metrics: metricsSettings === undefined ? undefined : `${address}${metricsSettings.path}`,
          chatUiPrefix: loaded.config.profiles?.["chat-ui"]?.prefix,
          firstModel: registry.getGraphNames()[0],
          store: storeConfigOf(loaded.config),
          background: setup,
          auth: auth !== undefined,
        });
      // What only --workers, --watch or a metrics port need loads when they are asked for.
      const { runPrimary } = await import("./cluster-primary.js");
      return runPrimary({ workers, host, prefix, metrics: metricsSettings, banner: describe });
    }
  }

  // Until the server's logger exists, the queue's warnings wait for it.
  let warn: (object: Record<string, unknown>, message: string) => void = () => {};
  const setup = await backgroundSetup(loaded, backends, { warn: (object, message) => warn(object, message) });
  const background =
    setup.kind === "unavailable"
      ? { unavailable: setup.unavailable }
      : { concurrency: setup.concurrency, ...(setup.kind === "shared" ? { shared: setup.shared } : {}) };
  if (setup.kind === "in-process" && backends.store.durable && !isWorker) {
    // The runs that were queued or running in the process before this one are gone with it.
    const failed = await backends.store.failUnfinished(
      "The server restarted while this background response was queued or running; create it again.",
    );
    if (failed > 0)
      process.stdout.write(
        `${chalk.yellow("note")} ${failed} background response${failed === 1 ? "" : "s"} left unfinished by the last run of the server now read${failed === 1 ? "s" : ""} failed\n`,
      );
  }
  const serve = new ChatServe({
    graphs: registry,
    background,
    ...(loaded.config.webhooks === undefined ? {} : { webhooks: webhookTargetsOf(loaded.config) }),
    checkpointScope,
    auth,
    limits,
    ...(customRoutes === undefined ? {} : { customRoutes }),
    ...(uiBundles === undefined ? {} : { uiBundles }),
    cors: server.cors,
    ...(metricsSettings === undefined ? {} : { metrics: metricsSettings }),
    bodyLimit: server.bodyLimit,
    // As under `langgraphjs dev`: a graph's exception reaches the developer's own client, where no one else can connect.
    developmentErrors: isLoopback(host) && auth === undefined,
    stalledClientTimeoutMs: server.stalledClientTimeoutMs,
    backendTimeoutMs: loaded.config.backendTimeoutMs,
    ...threadTtlOf(loaded.config.checkpointer.ttl),
    httpTimeouts: {
      headersTimeoutMs: server.headersTimeoutMs,
      requestTimeoutMs: server.requestTimeoutMs,
      keepAliveTimeoutMs: server.keepAliveTimeoutMs,
    },
    logger,
    requestLog: options.quiet !== true,
    readinessChecks: [
      ...(backends.checkpointerCheck === undefined ? [] : [{ name: "checkpointer", check: backends.checkpointerCheck }]),
      ...(backends.store.durable ? [{ name: "store", check: () => backends.store.check() }] : []),
    ],
  });
  logConnectionError = (backend, error) => serve.app.log.warn({ err: error, backend }, `lost a connection to the ${backend}`);
  warn = (object, message) => serve.app.log.warn(object, message);
  const place = { loopback: isLoopback(host), isWorker: cluster.isWorker, shared: sharesRuns(setup, backends), env };
  const selection = switchSettings(server, place);
  const app = await serve.bind({ prefix, ...selection, profiles: loaded.config.profiles });
  // Abandoned pending runs are deleted by the server itself; the sweep's lease makes one sweeper at a time.
  // With the memory checkpointer, paused runs are bounded by age as well as by count: by the
  // store's retention, unless pendingRuns says otherwise.
  const retention = storeConfigOf(loaded.config);
  const expiry =
    loaded.config.pendingRuns ??
    (loaded.config.checkpointer.kind === "memory" ? { expireAfter: retention.expireAfter, sweepEvery: retention.sweepEvery } : undefined);
  const sweeper =
    expiry === undefined
      ? undefined
      : new PendingRunSweeper({
          pendingRuns: backends.pendingRuns,
          coordinator: backends.runCoordinator,
          checkpointer: backends.checkpointer,
          expireAfterMs: parseDuration(expiry.expireAfter)!,
          sweepEveryMs: parseDuration(expiry.sweepEvery)!,
          rememberExpiredMs: parseDuration(retention.expireAfter),
          log: app.log,
        });
  // The store's retention: one sweep at a time across hosts, by the same lease pattern.
  const storeSweeper = new StoreSweeper({
    store: backends.store,
    coordinator: backends.runCoordinator,
    deleteThread: (model, threadId) => registry.deleteThread(model, threadId),
    expireAfterMs: parseDuration(retention.expireAfter)!,
    sweepEveryMs: parseDuration(retention.sweepEvery)!,
    timeoutMs: loaded.config.backendTimeoutMs,
    log: app.log,
  });
  app.addHook("onClose", async () => {
    await sweeper?.stop();
    await storeSweeper.stop();
    await backends.close();
  });
  // A worker's metrics are read by the primary's aggregator; the primary serves the port.
  if (isWorker) serve.metrics?.joinCluster();
  let metricsAddress: string | undefined;
  if (!isWorker && serve.metrics !== undefined && metricsSettings?.port !== undefined) {
    const { serveMetricsPort } = await import("../metrics-port.js");
    const metricsServer = await serveMetricsPort({ ...metricsSettings, port: metricsSettings.port }, host, serve.metrics).catch(
      async (error) => {
        await backends.close();
        throw new UserError(
          `cannot serve the metrics on port ${metricsSettings.port} (${loaded.displayPath}: metrics.port): ${firstLine(error)}`,
        );
      },
    );
    metricsAddress = `${metricsServer.address}${metricsSettings.path}`;
    app.addHook("onClose", () => metricsServer.close());
  }
  let address: string;
  // The banner below says where the server listens; fastify's own "Server listening" log line
  // would only repeat it (as JSON, in a pipe).
  const level = app.log.level;
  if (["info", "debug", "trace"].includes(level)) app.log.level = "warn";
  try {
    address = await app.listen({ host, port });
    app.log.level = level;
  } catch (error) {
    app.log.level = level;
    const code = (error as { code?: string }).code;
    await backends.close();
    if (code === "EADDRINUSE") throw new UserError(`port ${port} on ${host} is already in use; pass --port to pick another`);
    if (code === "EADDRNOTAVAIL") throw new UserError(`cannot listen on host '${host}'; pass --host`);
    throw error;
  }
  sweeper?.start();
  storeSweeper.start();
  if (!isWorker) {
    process.stdout.write(`${chalk.green("ready")} ${address}${prefix}  ${chalk.dim("(Ctrl+C to stop)")}\n`);
    const metricsUrl = metricsAddress ?? (metricsSettings === undefined ? undefined : `${address}${metricsSettings.path}`);
    process.stdout.write(
      banner({
        address,
        prefix,
        host,
        surfaces: serve.surfaces,
        offNotes: offNotes(selection, place),
        metrics: metricsUrl,
        chatUiPrefix: loaded.config.profiles?.["chat-ui"]?.prefix,
        firstModel: registry.getGraphNames()[0],
        store: storeConfigOf(loaded.config),
        background: setup,
        auth: auth !== undefined,
        withoutMessages: await registry.withoutMessages(),
        developmentErrors: isLoopback(host) && auth === undefined,
      }),
    );
  }

  onStopSignal(async (signal) => {
    // From now on /ready is 503 and new runs are refused with 503 server_shutting_down.
    serve.drain();
    const { shutdownGraceMs } = server;
    if (!isWorker && process.env[WATCHED_CHILD] !== "1") {
      process.stdout.write(`${chalk.dim(`${signal}: letting open requests finish (at most ${shutdownGraceMs / 1000}s)`)}\n`);
    }
    // The port stays open while the runs in flight finish, so a load balancer's probe and a
    // new request see 503s (never a refused connection) and send their traffic elsewhere.
    // Past the grace period, the runs left are ended: streams with an error frame, leases released.
    const grace = setTimeout(() => serve.abortRuns(), shutdownGraceMs);
    grace.unref();
    await serve.runsSettled();
    clearTimeout(grace);
    // With --workers, the port closes when every worker has drained, for all of them at once.
    if (isWorker) await (await import("../cluster-drain.js")).workerDrained();
    // Now the port closes. No connection has anything left to wait for but the last bytes of
    // its response: a moment for those, then close the rest, including connections a client
    // opened and never used, which would otherwise hold the shutdown until their timeout.
    const closed = app.close();
    app.server.closeIdleConnections();
    let flush: NodeJS.Timeout | undefined;
    await Promise.race([closed, new Promise((resolve) => (flush = setTimeout(resolve, FLUSH_MS)))]);
    clearTimeout(flush);
    app.server.closeAllConnections();
    await closed;
    process.exit(0);
  });
}

/** Every process shares runs and their events: a shared queue, the store and the checkpointer durable. */
function sharesRuns(setup: { kind: string }, backends: { durable: boolean; store: { durable: boolean } }): boolean {
  return setup.kind === "shared" && backends.durable && backends.store.durable;
}

/** `checkpointer.ttl` as the server takes it: the default in minutes, the sweep's interval in milliseconds. */
function threadTtlOf(
  ttl: { strategy: "delete" | "keep_latest"; defaultTtl?: number | undefined; sweepIntervalMinutes: number } | undefined,
): { threadTtl?: ThreadTtl } {
  if (ttl === undefined) return {};
  return {
    threadTtl: {
      strategy: ttl.strategy,
      ...(ttl.defaultTtl === undefined ? {} : { defaultMinutes: ttl.defaultTtl }),
      sweepIntervalMs: Math.max(1_000, Math.round(ttl.sweepIntervalMinutes * 60_000)),
    },
  };
}
