import cluster, { type Worker } from "node:cluster";
import chalk from "chalk";
import { CLUSTER_SCRAPE_REPLY, CLUSTER_SCRAPE_REQUEST, CLUSTER_WORKER_ENV } from "../../http/cluster-scrape.js";
import type { MetricsSettings } from "../../http/metrics.js";
import { closeWhenAllDrained } from "../cluster-drain.js";
import { serveMetricsPort } from "../metrics-port.js";
import { whenParentExits } from "../signals.js";

/**
 * True once every worker's process has exited. A worker stays in `cluster.workers` until its
 * process has exited AND its IPC channel has closed, in either order: on the last worker's
 * `exit` event it may still be listed, so the list's length cannot say the cluster is down.
 */
export function everyWorkerDead(workers: NodeJS.Dict<Worker> | undefined): boolean {
  return Object.values(workers ?? {}).every((worker) => worker === undefined || worker.isDead());
}

/**
 * The first process of `start --workers N`: forks N workers that share one port (node:cluster),
 * prints one `ready` line when all listen, replaces a worker that crashes, and passes
 * SIGINT/SIGTERM on so every worker shuts down gracefully.
 */
export async function runPrimary(options: {
  workers: number;
  host: string;
  prefix: string;
  metrics: (MetricsSettings & { path: string }) | undefined;
  /** The lines under `ready`, for the address the workers listen on. */
  banner?: (address: string) => string;
}): Promise<void> {
  let stopping = false;
  let listening = 0;
  const fork = () => cluster.fork({ [CLUSTER_WORKER_ENV]: "1" });
  if (options.metrics !== undefined) {
    // prom-client loads only when metrics are on.
    const { clusterMetricsText } = await import("../../http/metrics.js");
    // One scrape is the whole cluster: a worker asked under the API path forwards here, and
    // with metrics.port the primary serves the port itself.
    cluster.on("message", (worker, message: { type?: string; id?: string }) => {
      if (message?.type !== CLUSTER_SCRAPE_REQUEST) return;
      clusterMetricsText().then(
        ({ body }) => worker.send({ type: CLUSTER_SCRAPE_REPLY, id: message.id, body }),
        (error: unknown) => worker.send({ type: CLUSTER_SCRAPE_REPLY, id: message.id, error: String(error) }),
      );
    });
    if (options.metrics.port !== undefined) {
      const served = await serveMetricsPort({ ...options.metrics, port: options.metrics.port }, options.host, {
        scrape: clusterMetricsText,
      });
      process.stdout.write(`  ${chalk.dim("metrics")}  ${served.address}${options.metrics.path}\n`);
    }
  }

  cluster.on("listening", (_worker: Worker, address) => {
    listening += 1;
    if (listening === options.workers) {
      const host = address.address ?? options.host;
      process.stdout.write(
        `${chalk.green("ready")} http://${host}:${address.port}${options.prefix}  ${chalk.dim(`(${options.workers} workers, Ctrl+C to stop)`)}\n`,
      );
      if (options.banner !== undefined) process.stdout.write(options.banner(`http://${host}:${address.port}`));
    }
  });
  cluster.on("exit", (worker, code, signal) => {
    if (stopping) {
      if (everyWorkerDead(cluster.workers)) process.exit(0);
      return;
    }
    process.stdout.write(`${chalk.yellow("worker")} ${worker.process.pid} exited (${signal ?? code}); starting another\n`);
    fork();
  });
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    closeWhenAllDrained();
    process.stdout.write(`${chalk.dim(`${signal}: stopping ${options.workers} workers`)}\n`);
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal);
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
  // Started by npm, whose `sh -c` does not pass its SIGTERM on: npm exiting stops the workers too.
  whenParentExits(() => stop("SIGTERM"));
  for (let index = 0; index < options.workers; index += 1) fork();
}
