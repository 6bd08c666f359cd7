import pg from "pg";
import { MemorySaver } from "@langchain/langgraph";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import type { ParsedConfig } from "../config/define-config.js";
import { InMemoryRunCoordinator } from "./in-memory-run-coordinator.js";
import { MemoryPendingRunIndex, type PendingRunIndex } from "./pending-run-index.js";
import { PostgresPendingRunIndex } from "./postgres-pending-run-index.js";
import { PostgresRunCoordinator } from "./postgres-run-coordinator.js";
import { RedisRunCoordinator } from "./redis-run-coordinator.js";
import type { RunCoordinator } from "./run-coordinator.js";

// Serializes schema setup of several processes starting at once against one database.
const SETUP_LOCK_ID = "7318295102845663001";

/** The durable-state backends a config file describes, shared by its interrupt graphs. */
export interface Backends {
  checkpointer: unknown;
  runCoordinator: RunCoordinator;
  pendingRuns: PendingRunIndex;
  /** True when state outlives the process and is shared (Postgres checkpointer). */
  durable: boolean;
  /** True when leases are shared between processes (Redis or Postgres coordinator). */
  distributed: boolean;
  /** Readiness probes of the checkpointer (the coordinator is probed by the server). */
  checkpointerCheck?: () => Promise<void>;
  /** Creates tables once, before serving; not per request, not per worker. */
  setup(): Promise<void>;
  /** Closes connections and pools. */
  close(): Promise<void>;
}

function newPool(url: string, max: number): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max, connectionTimeoutMillis: 5_000 });
  // An idle connection that dies (database restart) must not crash the process; the pool
  // opens new connections when the database is back.
  pool.on("error", () => {});
  return pool;
}

/** Builds the configured checkpointer, coordinator and pending-run index. */
export async function backendsFromConfig(config: Pick<ParsedConfig, "checkpointer" | "coordinator">): Promise<Backends> {
  const closers: (() => Promise<void>)[] = [];
  let checkpointer: unknown;
  let pendingRuns: PendingRunIndex;
  let setup = async () => {};
  let checkpointerCheck: (() => Promise<void>) | undefined;
  if (config.checkpointer.kind === "postgres") {
    const { url, schema } = config.checkpointer;
    const pool = newPool(url, 10);
    const saver = new PostgresSaver(pool, undefined, { schema });
    const index = new PostgresPendingRunIndex(pool, schema);
    checkpointer = saver;
    pendingRuns = index;
    checkpointerCheck = async () => {
      await pool.query("SELECT 1");
    };
    setup = async () => {
      const client = await pool.connect();
      try {
        await client.query("SELECT pg_advisory_lock($1::bigint)", [SETUP_LOCK_ID]);
        await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema.replaceAll('"', '""')}"`);
        await saver.setup();
        await index.setup();
      } finally {
        await client.query("SELECT pg_advisory_unlock($1::bigint)", [SETUP_LOCK_ID]).catch(() => {});
        client.release();
      }
    };
    closers.push(() => pool.end());
  } else {
    checkpointer = new MemorySaver();
    pendingRuns = new MemoryPendingRunIndex();
  }

  let runCoordinator: RunCoordinator;
  const coordinator = config.coordinator;
  if (coordinator.kind === "redis") {
    const redis = new RedisRunCoordinator({ url: coordinator.url, leaseTtlMs: coordinator.leaseTtlMs, keyPrefix: coordinator.keyPrefix });
    runCoordinator = redis;
    closers.push(() => redis.close());
  } else if (coordinator.kind === "postgres") {
    // Its own pool: one connection per lease, plus one for readiness checks.
    const pool = newPool(coordinator.url, coordinator.maxConcurrentLeases + 1);
    runCoordinator = new PostgresRunCoordinator({ pool, maxConcurrentLeases: coordinator.maxConcurrentLeases });
    closers.push(() => pool.end());
  } else {
    runCoordinator = new InMemoryRunCoordinator();
  }

  return {
    checkpointer,
    runCoordinator,
    pendingRuns,
    durable: config.checkpointer.kind !== "memory",
    distributed: coordinator.kind !== "memory",
    checkpointerCheck,
    setup,
    close: async () => {
      await Promise.allSettled(closers.map((close) => close()));
    },
  };
}
