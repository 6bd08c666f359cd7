import { z } from "zod";
import { threadTtlSchema } from "./agent-server-config.js";

// The config's backends (checkpointer, coordinator, store), its durations and its limits: the
// schemas `configSchema` is made of.

const postgresUrl = z.string().regex(/^postgres(ql)?:\/\//u, "must be a postgres:// URL");
export const checkpointerSchema = z.discriminatedUnion(
  "kind",
  [
    z.strictObject({ kind: z.literal("memory"), ttl: threadTtlSchema.optional() }),
    z.strictObject({
      kind: z.literal("postgres"),
      url: postgresUrl,
      schema: z.string().min(1).default("public"),
      ttl: threadTtlSchema.optional(),
    }),
  ],
  { error: 'kind must be "memory" or "postgres"' },
);
export const coordinatorSchema = z.discriminatedUnion(
  "kind",
  [
    z.strictObject({ kind: z.literal("memory") }),
    z.strictObject({
      kind: z.literal("redis"),
      url: z.string().regex(/^rediss?:\/\//u, "must be a redis:// URL"),
      leaseTtlMs: z.int().min(1_000).default(30_000),
      keyPrefix: z.string().min(1).default("chat-serve:lease:"),
    }),
    z.strictObject({
      kind: z.literal("postgres"),
      url: postgresUrl,
      maxConcurrentLeases: z.int().min(1).default(10),
      leaseTimeoutMs: z.int().min(1_000).default(30_000),
    }),
  ],
  { error: 'kind must be "memory", "redis" or "postgres"' },
);

/** `90m`, `12h`, `7d` (also `s` and `ms`). */
export const durationSchema = z.string().regex(/^\d+(ms|s|m|h|d)$/u, "must be a duration like 90m, 12h or 7d");

const retention = { expireAfter: durationSchema.default("30d"), sweepEvery: durationSchema.default("10m") };
export const storeSchema = z.discriminatedUnion(
  "kind",
  [
    z.strictObject({
      kind: z.literal("memory"),
      ...retention,
      maxResponses: z.int().min(1).optional(),
      maxConversations: z.int().min(1).optional(),
      maxSessions: z.int().min(1).optional(),
    }),
    z.strictObject({ kind: z.literal("postgres"), url: postgresUrl, schema: z.string().min(1).default("public"), ...retention }),
  ],
  { error: 'kind must be "memory" or "postgres"' },
);

export const limitSchema = z.strictObject({
  requestsPerMinute: z.int().min(1).optional(),
  concurrentRuns: z.int().min(1).optional(),
});
