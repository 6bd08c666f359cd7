import { type BaseStore, InMemoryStore } from "@langchain/langgraph";
import type { Redis } from "ioredis";
import { type ParsedConfig, storeConfigOf } from "../config/define-config.js";
import { InMemoryRunCoordinator } from "../coordination/in-memory-run-coordinator.js";
import { MemoryPendingRunIndex, type PendingRunIndex } from "../coordination/pending-run-index.js";
import type { RunCoordinator } from "../coordination/run-coordinator.js";
import { TurnTakingMemorySaver } from "../coordination/turn-taking-memory-saver.js";
import type { ConversationStore } from "../store/conversation-store.js";
import { ExpiringStore } from "../store/expiring-store.js";
import type { GraphStoreIndex } from "../store/graph-store-index.js";
import { MemoryConversationStore } from "../store/memory-conversation-store.js";
import { DEFAULT_BACKEND_TIMEOUT_MS } from "../util/deadline.js";

// Serializes schema setup of several processes starting at once against one database.
const SETUP_LOCK_ID = "7318295102845663001";

/** The durable-state backends a config file describes, shared by its interrupt graphs. */
export interface Backends {
  checkpointer: unknown;
  runCoordinator: RunCoordinator;
  pendingRuns: PendingRunIndex;
  /** Stored responses, conversations and chat sessions. */
  store: ConversationStore;
  /** LangGraph's store for the graphs of the Agent Protocol: `PostgresStore` beside a Postgres checkpointer; absent: in memory. */
  graphStore?: BaseStore;
  /** True when state outlives the process and is shared (Postgres checkpointer). */
  durable: boolean;
  /** True when leases are shared between processes (Redis or Postgres coordinator). */
  distributed: boolean;
  /** The Redis coordinator's client and key prefix, for the rate-limit counters; absent without Redis. */
  redis?: { client: Redis; keyPrefix: string };
  /** Readiness probes of the checkpointer (the coordinator is probed by the server). */
  checkpointerCheck?: () => Promise<void>;
  /** Creates tables once, before serving; not per request, not per worker. */
  setup(): Promise<void>;
  /** Closes connections and pools. */
  close(): Promise<void>;
}

export interface BackendOptions {
  /** Deadline of every backend call (default 2 s). */
  timeoutMs?: number;
  /** Told about connection errors, which never crash the process. */
  onConnectionError?: (backend: "checkpointer" | "coordinator" | "store", error: Error) => void;
  /** The semantic index of LangGraph's store, and where the config sets it (for its errors). */
  graphStoreIndex?: GraphStoreIndex & { where: string };
}

// Setup creates tables and may wait on another process's setup lock: more than one call's worth.
const SETUP_TIMEOUT_MS = 30_000;

/** LangGraph's index config of the store. */
function storeIndex(index: GraphStoreIndex): { dims: number; embeddings: GraphStoreIndex["embeddings"]; fields?: string[] } {
  return { dims: index.dims, embeddings: index.embeddings, ...(index.fields === undefined ? {} : { fields: index.fields }) };
}

/**
 * A semantic store on Postgres needs the pgvector extension (`PostgresStore` creates it): a
 * Postgres without it stops the start with one line saying what to install, never a store
 * that searches without meaning.
 */
async function requirePgvector(
  client: { query(text: string): Promise<{ rowCount: number | null }> },
  url: string,
  where: string,
): Promise<void> {
  const found = await client.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'");
  if ((found.rowCount ?? 0) > 0) return;
  const { ConfigError } = await import("../errors/developer-errors.js");
  throw new ConfigError(
    `${where}: a semantic store needs the pgvector extension, which the Postgres at ${hostOf(url)} does not have: install it (the postgresql-<version>-pgvector package, or from github.com/pgvector/pgvector), or leave the index out`,
  );
}

/** Where a Postgres URL points, with no user or password. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "the configured URL";
  }
}

/** Builds the configured checkpointer, coordinator and pending-run index. */
export async function backendsFromConfig(
  config: Pick<ParsedConfig, "checkpointer" | "coordinator" | "store"> & Partial<Pick<ParsedConfig, "graphStore">>,
  options: BackendOptions = {},
): Promise<Backends> {
  const storeTtl = config.graphStore?.ttl;
  const timeoutMs = options.timeoutMs ?? DEFAULT_BACKEND_TIMEOUT_MS;
  const report = options.onConnectionError ?? (() => {});
  const closers: (() => Promise<void>)[] = [];
  let checkpointer: unknown;
  let pendingRuns: PendingRunIndex;
  let setup = async () => {};
  let checkpointerCheck: (() => Promise<void>) | undefined;
  let checkpointerPool: { url: string; pool: import("pg").Pool } | undefined;
  let graphStore: BaseStore | undefined;
  // Each backend's modules (pg, ioredis, the Postgres checkpointer) load only when the config names it.
  if (config.checkpointer.kind === "postgres") {
    const [{ createPostgresPool }, { DeadlinePostgresSaver }, { PostgresPendingRunIndex }] = await Promise.all([
      import("../coordination/postgres-pool.js"),
      import("../coordination/deadline-postgres-saver.js"),
      import("../coordination/postgres-pending-run-index.js"),
    ]);
    const { url, schema } = config.checkpointer;
    const pool = createPostgresPool({ url, max: 10, timeoutMs, onConnectionError: (error) => report("checkpointer", error) });
    checkpointerPool = { url, pool };
    const saver = new DeadlinePostgresSaver(pool, { schema, timeoutMs });
    const index = new PostgresPendingRunIndex(pool, schema);
    checkpointer = saver;
    pendingRuns = index;
    // LangGraph's store beside the checkpoints, on a small pool of its own with the same deadlines.
    const { PostgresStore } = await import("@langchain/langgraph-checkpoint-postgres/store");
    const indexed = options.graphStoreIndex;
    const postgresStore = new PostgresStore({
      connectionOptions: { connectionString: url, max: 4, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs },
      schema,
      // Items' times to live: kept and swept by the store itself (an idempotent DELETE, on every process).
      ttl: {
        ...(storeTtl?.defaultTtl === undefined ? {} : { defaultTtl: storeTtl.defaultTtl }),
        refreshOnRead: storeTtl?.refreshOnRead ?? true,
        sweepIntervalMinutes: storeTtl?.sweepIntervalMinutes ?? 60,
      },
      // Its index names the embeddings `embed` (LangGraph's in-memory store says `embeddings`).
      ...(indexed === undefined ? {} : { index: { ...storeIndex(indexed), embed: indexed.embeddings } }),
    });
    // Its pool is made inside the store: an idle connection that breaks (Postgres restarting)
    // emits an error there, which must be reported like the checkpointer's, not crash the process.
    (postgresStore as unknown as { core?: { pool?: import("pg").Pool } }).core?.pool?.on("error", (error) => report("store", error));
    // Searches and listings by whole labels: the store's own prefix match is text (`LIKE 'a%'`).
    const { WholeLabelStore } = await import("../store/whole-label-store.js");
    graphStore = new WholeLabelStore(postgresStore, { likeMatching: true });
    closers.push(() => postgresStore.stop());
    checkpointerCheck = async () => {
      await pool.query("SELECT 1");
    };
    // Setup has its own pool: its statements may wait on another process's setup lock.
    setup = async () => {
      const setupPool = createPostgresPool({ url, max: 2, timeoutMs: SETUP_TIMEOUT_MS });
      try {
        const client = await setupPool.connect();
        try {
          await client.query("SELECT pg_advisory_lock($1::bigint)", [SETUP_LOCK_ID]);
          await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema.replaceAll('"', '""')}"`);
          await new DeadlinePostgresSaver(setupPool, { schema, timeoutMs: SETUP_TIMEOUT_MS }).setup();
          await new PostgresPendingRunIndex(setupPool, schema).setup();
          if (indexed !== undefined) await requirePgvector(client, url, indexed.where);
          await postgresStore.setup();
        } finally {
          await client.query("SELECT pg_advisory_unlock($1::bigint)", [SETUP_LOCK_ID]).catch(() => {});
          client.release();
        }
      } finally {
        await setupPool.end();
      }
    };
    closers.push(() => pool.end());
  } else {
    checkpointer = new TurnTakingMemorySaver();
    pendingRuns = new MemoryPendingRunIndex();
  }

  // The store shares the checkpointer's pool when both name the same database.
  let store: ConversationStore;
  const storeConfig = storeConfigOf(config);
  if (storeConfig.kind === "postgres") {
    const [{ createPostgresPool }, { PostgresConversationStore }] = await Promise.all([
      import("../coordination/postgres-pool.js"),
      import("../store/postgres-conversation-store.js"),
    ]);
    let pool = checkpointerPool?.url === storeConfig.url ? checkpointerPool.pool : undefined;
    if (pool === undefined) {
      const own = createPostgresPool({ url: storeConfig.url, max: 10, timeoutMs, onConnectionError: (error) => report("store", error) });
      closers.push(() => own.end());
      pool = own;
    }
    store = new PostgresConversationStore(pool, storeConfig.schema);
    const checkpointerSetup = setup;
    const { url, schema } = storeConfig;
    setup = async () => {
      await checkpointerSetup();
      const setupPool = createPostgresPool({ url, max: 2, timeoutMs: SETUP_TIMEOUT_MS });
      try {
        const client = await setupPool.connect();
        try {
          await client.query("SELECT pg_advisory_lock($1::bigint)", [SETUP_LOCK_ID]);
          await new PostgresConversationStore(setupPool, schema).setup();
        } finally {
          await client.query("SELECT pg_advisory_unlock($1::bigint)", [SETUP_LOCK_ID]).catch(() => {});
          client.release();
        }
      } finally {
        await setupPool.end();
      }
    };
  } else {
    store = new MemoryConversationStore({
      ...(storeConfig.maxResponses === undefined ? {} : { maxResponses: storeConfig.maxResponses }),
      ...(storeConfig.maxConversations === undefined ? {} : { maxConversations: storeConfig.maxConversations }),
      ...(storeConfig.maxSessions === undefined ? {} : { maxSessions: storeConfig.maxSessions }),
    });
  }

  let runCoordinator: RunCoordinator;
  let redis: Backends["redis"];
  const coordinator = config.coordinator;
  if (coordinator.kind === "redis") {
    const { RedisRunCoordinator } = await import("../coordination/redis-run-coordinator.js");
    const redisCoordinator = new RedisRunCoordinator({
      url: coordinator.url,
      leaseTtlMs: coordinator.leaseTtlMs,
      keyPrefix: coordinator.keyPrefix,
      timeoutMs,
    });
    runCoordinator = redisCoordinator;
    redis = { client: redisCoordinator.redis, keyPrefix: redisCoordinator.keyPrefix };
    closers.push(() => redisCoordinator.close());
  } else if (coordinator.kind === "postgres") {
    const [{ createPostgresPool }, { PostgresRunCoordinator }] = await Promise.all([
      import("../coordination/postgres-pool.js"),
      import("../coordination/postgres-run-coordinator.js"),
    ]);
    // Its own pool: one connection per lease, plus one for readiness checks.
    const pool = createPostgresPool({
      url: coordinator.url,
      max: coordinator.maxConcurrentLeases + 1,
      timeoutMs,
      onConnectionError: (error) => report("coordinator", error),
    });
    runCoordinator = new PostgresRunCoordinator({
      pool,
      maxConcurrentLeases: coordinator.maxConcurrentLeases,
      leaseTimeoutMs: coordinator.leaseTimeoutMs,
    });
    closers.push(() => pool.end());
  } else {
    runCoordinator = new InMemoryRunCoordinator();
  }
  // In memory, LangGraph's store is semantic with its own index (vectors kept beside the items),
  // and its items' times to live are kept beside it.
  if (graphStore === undefined && (options.graphStoreIndex !== undefined || storeTtl !== undefined)) {
    const inner = new InMemoryStore(options.graphStoreIndex === undefined ? undefined : { index: storeIndex(options.graphStoreIndex) });
    graphStore = new ExpiringStore(inner, {
      ...(storeTtl?.defaultTtl === undefined ? {} : { defaultTtl: storeTtl.defaultTtl }),
      refreshOnRead: storeTtl?.refreshOnRead ?? true,
    });
  }

  return {
    checkpointer,
    runCoordinator,
    pendingRuns,
    store,
    ...(graphStore === undefined ? {} : { graphStore }),
    durable: config.checkpointer.kind !== "memory",
    distributed: coordinator.kind !== "memory",
    checkpointerCheck,
    ...(redis === undefined ? {} : { redis }),
    setup,
    close: async () => {
      await Promise.allSettled(closers.map((close) => close()));
    },
  };
}
