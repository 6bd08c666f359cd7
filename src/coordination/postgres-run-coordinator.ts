import { createHash } from "node:crypto";
import type pg from "pg";
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
  /**
   * How soon Postgres drops the lock of a holder that vanished without closing its connection
   * (power loss, partition), so another process can take the run. The holder sends a
   * heartbeat every third of it; Postgres ends a lease session that stays silent this long
   * (`idle_session_timeout`, Postgres 14+). Default 30 s.
   */
  leaseTimeoutMs?: number;
}

/**
 * The advisory-lock id of a key as a signed 64-bit integer: a checkpoint key (a SHA-256 hex
 * digest) gives its first 64 bits; any other key (the pending-run sweep's, say) gives the
 * first 64 bits of its own SHA-256.
 */
export function advisoryLockId(key: string): string {
  const hex = /^[0-9a-f]{16}/iu.test(key) ? key.slice(0, 16) : createHash("sha256").update(key).digest("hex").slice(0, 16);
  return BigInt.asIntN(64, BigInt(`0x${hex}`)).toString();
}

// Takes the lock and, only when it got it, arms the session's idle timeout, in one round trip.
// Servers before 14 have no idle_session_timeout; their leases rely on TCP keepalive.
const TRY_LOCK = `SELECT CASE WHEN pg_try_advisory_lock($1::bigint) THEN
  (CASE WHEN current_setting('server_version_num')::int >= 140000
        THEN set_config('idle_session_timeout', $2, false) ELSE '' END) IS NOT NULL
  ELSE false END AS locked`;
const UNLOCK = `SELECT pg_advisory_unlock($1::bigint) AS unlocked,
  CASE WHEN current_setting('server_version_num')::int >= 140000
       THEN set_config('idle_session_timeout', '0', false) END AS reset`;

/**
 * Leases as session-level advisory locks in Postgres (`pg_try_advisory_lock`), each on a
 * pooled connection held for the lease. Try-lock only, never queued. A connection whose
 * unlock fails is destroyed rather than returned to the pool holding a lock; a connection that
 * dies, or a heartbeat that fails, aborts the run. Needs direct connections or session-mode
 * pooling: a transaction-mode pooler cannot keep a session lock.
 */
export class PostgresRunCoordinator implements RunCoordinator {
  readonly #pool: pg.Pool;
  readonly #max: number;
  readonly #leaseTimeoutMs: number;
  /** Keys this process is taking or holds: a second request for one is busy without asking Postgres. */
  readonly #keys = new Set<string>();
  #held = 0;

  constructor(options: PostgresRunCoordinatorOptions) {
    const { pool } = options;
    const poolMax = (pool.options as { max?: number }).max ?? 10;
    this.#max = options.maxConcurrentLeases ?? poolMax - 1;
    if (!Number.isInteger(this.#max) || this.#max < 1 || this.#max >= poolMax) {
      throw new TypeError(`maxConcurrentLeases must be at least 1 and below the pool maximum (${poolMax}), so a connection stays free`);
    }
    this.#leaseTimeoutMs = options.leaseTimeoutMs ?? 30_000;
    if (!Number.isInteger(this.#leaseTimeoutMs) || this.#leaseTimeoutMs < 300) {
      throw new TypeError("leaseTimeoutMs must be a whole number of milliseconds, at least 300");
    }
    const claimed = pool as unknown as Record<symbol, boolean>;
    if (claimed[POOL_CLAIM]) throw new TypeError("this pool already has a PostgresRunCoordinator; use one coordinator per pool");
    claimed[POOL_CLAIM] = true;
    this.#pool = pool;
  }

  #full(): BackendUnavailableError {
    return new BackendUnavailableError(`This server is running its maximum of ${this.#max} interrupt runs; retry shortly.`);
  }

  async tryAcquire(key: string): Promise<RunLease | null> {
    if (this.#keys.has(key)) return null;
    if (this.#held >= this.#max) throw this.#full();
    this.#keys.add(key);
    let lease: RunLease | null = null;
    try {
      lease = await this.#lock(key);
      return lease;
    } finally {
      if (lease === null) this.#keys.delete(key);
    }
  }

  async #lock(key: string): Promise<RunLease | null> {
    const client = await this.#pool.connect();
    const lockId = advisoryLockId(key);
    let locked: boolean;
    try {
      const result = await client.query<{ locked: boolean }>(TRY_LOCK, [lockId, `${this.#leaseTimeoutMs}ms`]);
      locked = result.rows[0]?.locked === true;
    } catch (error) {
      client.release(error as Error);
      throw error;
    }
    if (!locked) {
      client.release();
      return null;
    }
    // Attempts are not counted, only held leases; attempts that race past the check above
    // give their lock back.
    if (this.#held >= this.#max) {
      await client.query(UNLOCK, [lockId]).then(
        () => client.release(),
        (error: Error) => client.release(error),
      );
      throw this.#full();
    }
    this.#held += 1;
    const controller = new AbortController();
    const lost = (reason: string, cause?: unknown) => {
      clearInterval(heartbeat);
      if (!controller.signal.aborted) controller.abort(new Error(reason, { cause }));
    };
    const onError = (error: Error) => lost("the run's lease connection was lost", error);
    client.on("error", onError);
    const heartbeat = setInterval(
      () => {
        client.query("SELECT 1").catch((error: unknown) => lost("the run's lease heartbeat failed", error));
      },
      Math.max(100, Math.floor(this.#leaseTimeoutMs / 3)),
    );
    heartbeat.unref();
    return {
      key,
      signal: controller.signal,
      release: once(async () => {
        clearInterval(heartbeat);
        try {
          await client.query(UNLOCK, [lockId]);
          client.off("error", onError);
          client.release();
        } catch (error) {
          // Never hand a connection that may still hold the lock back to the pool.
          client.off("error", onError);
          client.release(error instanceof Error ? error : new Error(String(error)));
        } finally {
          this.#held -= 1;
          this.#keys.delete(key);
        }
      }),
    };
  }

  async check(): Promise<void> {
    await this.#pool.query("SELECT 1");
  }

  /** Leases held right now. */
  get activeLeases(): number {
    return this.#held;
  }
}
