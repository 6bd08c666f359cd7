import pg from "pg";
import { BackendUnavailableError } from "../errors/catalogue.js";
import { once, type RunCoordinator, type RunLease } from "./run-coordinator.js";

const POOL_CLAIM = Symbol.for("chat-serve.PostgresRunCoordinator");

export interface PostgresRunCoordinatorOptions {
  /** The pool to take lease connections from; one coordinator per pool. */
  pool: pg.Pool;
  /**
   * Leases held at once. Each holds one pooled connection for the whole run, so it must be
   * below the pool maximum and leave a connection for everything else. Default: max − 1.
   */
  maxConcurrentLeases?: number;
}

/** The advisory-lock id of a checkpoint key: its first 64 bits as a signed bigint. */
export function advisoryLockId(key: string): string {
  return BigInt.asIntN(64, BigInt(`0x${key.slice(0, 16).padEnd(16, "0")}`)).toString();
}

/**
 * Leases as session-level advisory locks in Postgres (`pg_try_advisory_lock`), each on a
 * pooled connection held for the lease. Try-lock only, never queued. A connection whose
 * unlock fails is destroyed rather than returned to the pool holding a lock; a connection that
 * dies frees its lock in the server and aborts the run. Needs direct connections or
 * session-mode pooling: a transaction-mode pooler cannot keep a session lock.
 */
export class PostgresRunCoordinator implements RunCoordinator {
  readonly #pool: pg.Pool;
  readonly #max: number;
  #active = 0;

  constructor(options: PostgresRunCoordinatorOptions) {
    const { pool } = options;
    const poolMax = (pool.options as { max?: number }).max ?? 10;
    this.#max = options.maxConcurrentLeases ?? poolMax - 1;
    if (!Number.isInteger(this.#max) || this.#max < 1 || this.#max >= poolMax) {
      throw new TypeError(
        `maxConcurrentLeases must be at least 1 and below the pool maximum (${poolMax}), so a connection stays free`,
      );
    }
    const claimed = pool as unknown as Record<symbol, boolean>;
    if (claimed[POOL_CLAIM]) throw new TypeError("this pool already has a PostgresRunCoordinator; use one coordinator per pool");
    claimed[POOL_CLAIM] = true;
    this.#pool = pool;
  }

  async tryAcquire(key: string): Promise<RunLease | null> {
    if (this.#active >= this.#max) {
      throw new BackendUnavailableError(`This server is running its maximum of ${this.#max} interrupt runs; retry shortly.`);
    }
    this.#active += 1;
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      this.#active -= 1;
      throw error;
    }
    const lockId = advisoryLockId(key);
    let locked: boolean;
    try {
      const result = await client.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1::bigint) AS locked", [lockId]);
      locked = result.rows[0]?.locked === true;
    } catch (error) {
      client.release(error as Error);
      this.#active -= 1;
      throw error;
    }
    if (!locked) {
      client.release();
      this.#active -= 1;
      return null;
    }
    const controller = new AbortController();
    const onError = (error: Error) => controller.abort(new Error("the run's lease connection was lost", { cause: error }));
    client.on("error", onError);
    return {
      key,
      signal: controller.signal,
      release: once(async () => {
        try {
          await client.query("SELECT pg_advisory_unlock($1::bigint)", [lockId]);
          client.off("error", onError);
          client.release();
        } catch (error) {
          // Never hand a connection that may still hold the lock back to the pool.
          client.off("error", onError);
          client.release(error instanceof Error ? error : new Error(String(error)));
        } finally {
          this.#active -= 1;
        }
      }),
    };
  }

  async check(): Promise<void> {
    await this.#pool.query("SELECT 1");
  }

  /** Leases held right now. */
  get activeLeases(): number {
    return this.#active;
  }
}
