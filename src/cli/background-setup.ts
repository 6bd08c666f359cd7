import type { SharedBackground } from "../app/chat-serve.js";
import type { BullmqQueue } from "../background/bullmq-queue.js";
import type { LoadedConfig } from "../config/load-config.js";
import type { Backends } from "../server/backends.js";
import { parseDuration } from "../util/duration.js";

/** How this deployment runs background responses. */
export type BackgroundSetup =
  /** In this process, from memory: one process only; a restart loses them. */
  | { kind: "in-process"; concurrency: number }
  /** On the queue every process shares (BullMQ on the coordinator's Redis). */
  | { kind: "shared"; concurrency: number; shared: SharedBackground & { queue: BullmqQueue }; takeoverAfter: string; url: string }
  /** Refused, saying why. */
  | { kind: "unavailable"; unavailable: string };

/**
 * Background responses follow the coordinator: with Redis they go on a queue every process
 * and host shares; with the memory coordinator (one process) they run in the process. A
 * Postgres coordinator has no queue for them, and a queue needs a store every process reads.
 */
export async function backgroundSetup(
  loaded: LoadedConfig,
  backends: Pick<Backends, "store" | "durable">,
  log: { warn(object: Record<string, unknown>, message: string): void },
): Promise<BackgroundSetup> {
  const { background, coordinator, backendTimeoutMs } = loaded.config;
  const concurrency = background?.concurrency ?? 4;
  if (coordinator.kind === "memory") return { kind: "in-process", concurrency };
  if (coordinator.kind !== "redis") {
    return {
      kind: "unavailable",
      unavailable: `background responses on several processes need a queue on Redis: set coordinator to { kind: "redis", url } in ${loaded.displayPath}. Run this one in the foreground.`,
    };
  }
  if (!backends.store.durable) {
    return {
      kind: "unavailable",
      unavailable: `background responses on several processes need a store every process reads: set store (or checkpointer) to { kind: "postgres", url } in ${loaded.displayPath}. Run this one in the foreground.`,
    };
  }
  const takeoverAfter = background?.takeoverAfter ?? "30s";
  const takeoverAfterMs = parseDuration(takeoverAfter)!;
  // BullMQ loads only for a deployment that has a shared queue.
  const { BullmqQueue } = await import("../background/bullmq-queue.js");
  const queue = new BullmqQueue({
    url: coordinator.url,
    keyPrefix: background?.keyPrefix ?? "chat-serve",
    takeoverAfterMs,
    timeoutMs: backendTimeoutMs,
    log,
  });
  return {
    kind: "shared",
    concurrency,
    takeoverAfter,
    url: coordinator.url,
    shared: {
      queue,
      events: queue.events,
      agentEvents: queue.agentEvents,
      protocolLogs: queue.protocolLogs,
      resumable: backends.durable,
      // A background run's leases expire within takeoverAfter of its worker's death, so the worker
      // that takes it over waits that long at most, not the coordinator's lease TTL.
      leaseTtlMs: Math.min(takeoverAfterMs, coordinator.leaseTtlMs ?? 30_000),
      leaseWaitMs: Math.min(takeoverAfterMs, coordinator.leaseTtlMs ?? 30_000) + 5_000,
    },
  };
}

/** The banner's words for it. */
export function describeBackground(setup: BackgroundSetup): string {
  if (setup.kind === "unavailable") return "not available: needs a Redis coordinator and a Postgres store (see docs/background-runs.md)";
  if (setup.kind === "in-process") {
    return `runs in this process, ${setup.concurrency} at a time; those queued or running at a restart end failed`;
  }
  const recovery = setup.shared.resumable
    ? "goes on from its last step"
    : "ends failed (starts again only for graphs with background.retry)";
  return `shared queue on Redis (BullMQ), ${setup.concurrency} at a time here; a run whose worker stops ${recovery} on another worker after ${setup.takeoverAfter}`;
}
