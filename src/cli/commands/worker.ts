import chalk from "chalk";
import { pino } from "pino";
import { BackgroundRuns } from "../../background/background-runs.js";
import { RunWebhooks } from "../../background/run-webhooks.js";
import { WebhookSender } from "../../background/webhooks.js";
import { runWebhookPolicyOf, webhookTargetsOf } from "../../config/define-config.js";
import { loadConfig } from "../../config/load-config.js";
import { ServerShuttingDownError } from "../../errors/catalogue.js";
import { UserError } from "../../errors/developer-errors.js";
import { RunTracker } from "../../runs/run-tracker.js";
import { serverSetupFromConfig } from "../../server/from-config.js";
import { backgroundSetup } from "../background-setup.js";
import { redactUrl } from "../output.js";
import { onStopSignal } from "../signals.js";

export interface WorkerOptions {
  config?: string;
  concurrency?: string;
  logLevel?: string;
}

function parseConcurrency(value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const concurrency = Number(value);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 1_000) {
    throw new UserError(`--concurrency must be a whole number from 1 to 1000 (got '${value}')`);
  }
  return concurrency;
}

/**
 * `chat-serve worker`: runs background responses from the deployment's shared queue, with no
 * HTTP API, so the workers scale apart from the servers. On SIGTERM it takes no more runs and
 * lets those it runs finish within the shutdown grace; past it, it hands them back to the
 * queue (another worker goes on from their last step) or ends them failed.
 */
export async function workerCommand(options: WorkerOptions): Promise<void> {
  const level = options.logLevel ?? process.env.LOG_LEVEL ?? "info";
  const log = pino({ level, base: { role: "worker" } });
  // A worker serves nothing over HTTP: the API keys are not its business.
  const loaded = await loadConfig({ configPath: options.config, operator: true });
  const { registry, backends } = await serverSetupFromConfig(loaded, {
    onConnectionError: (backend, error) => log.warn({ err: error, backend }, `lost a connection to the ${backend}`),
  });
  const setup = await backgroundSetup(loaded, backends, log);
  if (setup.kind !== "shared") {
    await backends.close();
    throw new UserError(
      `chat-serve worker takes background runs from a queue the servers share, on Redis: set coordinator to { kind: "redis", url } and store (or checkpointer) to { kind: "postgres", url } in ${loaded.displayPath}`,
    );
  }
  try {
    await backends.setup();
    await backends.checkpointerCheck?.();
    await backends.store.check();
    await setup.shared.queue.check();
  } catch (error) {
    await setup.shared.queue.close();
    await backends.close();
    throw new UserError(`chat-serve worker cannot reach its backends (${loaded.displayPath}): ${(error as Error).message}`);
  }
  await registry.validateAll();
  const webhooks =
    loaded.config.webhooks === undefined || loaded.config.webhooks.length === 0
      ? undefined
      : new WebhookSender(webhookTargetsOf(loaded.config), { log });
  // A queued Agent Protocol run's `webhook` is sent from here when it ran here; a path goes to
  // the server this config describes (HOST and PORT as `chat-serve start` reads them).
  const { server } = loaded.config;
  const serverAddress = { address: process.env.HOST || server.host, port: Number(process.env.PORT || server.port), family: "IPv4" };
  const runWebhooks = new RunWebhooks(runWebhookPolicyOf(loaded.config), () => serverAddress, log);
  const runs = new RunTracker();
  const concurrency = parseConcurrency(options.concurrency, setup.concurrency);
  const background = new BackgroundRuns({
    registry,
    queue: setup.shared.queue,
    events: setup.shared.events,
    ...(setup.shared.agentEvents === undefined ? {} : { agentEvents: setup.shared.agentEvents }),
    ...(setup.shared.protocolLogs === undefined ? {} : { protocolLogs: setup.shared.protocolLogs }),
    runs,
    backendTimeoutMs: loaded.config.backendTimeoutMs,
    concurrency,
    resumable: setup.shared.resumable,
    ...(setup.shared.leaseWaitMs === undefined ? {} : { leaseWaitMs: setup.shared.leaseWaitMs }),
    leaseTtlMs: setup.shared.leaseTtlMs,
    log,
    ...(webhooks === undefined ? {} : { webhooks }),
    runWebhooks,
  });
  background.start();
  process.stdout.write(`${chalk.bold("chat-serve worker")} ${chalk.dim(`config ${loaded.displayPath}`)}\n`);
  process.stdout.write(
    `${chalk.green("ready")} taking background runs from the queue on ${redactUrl(setup.url)}, ${concurrency} at a time  ${chalk.dim("(Ctrl+C to stop)")}\n`,
  );

  onStopSignal(async (signal) => {
    const graceMs = loaded.config.server.shutdownGraceMs;
    process.stdout.write(`${chalk.dim(`${signal}: taking no more runs; letting those running finish (at most ${graceMs / 1000}s)`)}\n`);
    background.drain();
    // Past the grace period the runs left go back to the queue, or end failed when they cannot go on.
    const grace = setTimeout(() => runs.abortAll(new ServerShuttingDownError()), graceMs);
    grace.unref();
    await runs.whenIdle();
    clearTimeout(grace);
    await background.close();
    await webhooks?.close();
    runWebhooks.close();
    await backends.close();
    process.exit(0);
  });
}
