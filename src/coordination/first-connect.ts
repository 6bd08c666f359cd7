import { once as onceEvent } from "node:events";
import type { Redis } from "ioredis";

/**
 * Waits, within `timeoutMs`, for a Redis connection still making its first connect (a
 * connection without an offline queue fails every call until then); starts a lazy one. A
 * connection that is up, or was lost later, returns at once: its calls answer or fail.
 */
export async function firstConnect(redis: Redis, timeoutMs: number): Promise<void> {
  const { status } = redis;
  if (status !== "wait" && status !== "connecting" && status !== "connect") return;
  if (status === "wait") redis.connect().catch(() => {});
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    await onceEvent(redis, "ready", { signal: controller.signal }).catch(() => {});
  } finally {
    clearTimeout(timer);
  }
}
