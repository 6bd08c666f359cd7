import pg from "pg";

export interface PostgresPoolOptions {
  url: string;
  max: number;
  /** Deadline of a connection checkout (connecting included) and of every query. */
  timeoutMs: number;
  /** Told about connection errors; they never reach the process as an unhandled 'error'. */
  onConnectionError?: (error: Error) => void;
  /** A client idle this long is checked before it is handed out (default 1 s). */
  checkAfterIdleMs?: number;
}

type QueryCallback = (error: Error | null, result?: unknown) => void;

/**
 * Builds a pool class whose clients are safe to hold through any outage: each has an
 * `'error'` listener from the moment it exists (pg-pool drops its own while a client is
 * checked out, and an unheard `'error'` ends the process), and each query has a deadline
 * past which the connection is destroyed. A stalled server (packets dropped, no reset)
 * then fails the query at once and frees the client, instead of leaving it waiting behind a
 * query that will never answer.
 */
function deadlineClientClass(timeoutMs: number, onConnectionError: (error: Error) => void): typeof pg.Client {
  class DeadlineClient extends pg.Client {
    constructor(config?: string | pg.ClientConfig) {
      super(config);
      this.on("error", onConnectionError);
    }

    #expire(): void {
      const stream = (this as unknown as { connection?: { stream?: { destroy(error?: Error): void } } }).connection?.stream;
      stream?.destroy();
    }

    // Every call shape pg offers (promise, callback) gets the same deadline.
    override query(...args: unknown[]): never {
      const timer = setTimeout(() => this.#expire(), timeoutMs);
      const callbackAt = args.findIndex((arg) => typeof arg === "function");
      if (callbackAt >= 0) {
        const callback = args[callbackAt] as QueryCallback;
        args[callbackAt] = (error: Error | null, result?: unknown) => {
          clearTimeout(timer);
          callback(error, result);
        };
        return (super.query as (...rest: unknown[]) => never)(...args);
      }
      const result = (super.query as (...rest: unknown[]) => unknown)(...args);
      if (result instanceof Promise) {
        result.then(
          () => clearTimeout(timer),
          () => clearTimeout(timer),
        );
      } else {
        clearTimeout(timer);
      }
      return result as never;
    }
  }
  return DeadlineClient;
}

/** pg's callback of a checkout. */
type ConnectCallback = NonNullable<Parameters<pg.Pool["connect"]>[0]>;

/** When a client went back to the pool last. */
const RELEASED = Symbol("released");
type Released = pg.PoolClient & { [RELEASED]?: number };

/** Whether a client answers a trivial query within `ms`; one that does not is cut (its connection destroyed). */
async function answers(client: pg.PoolClient, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const silent = new Promise<false>((resolve) => {
    timer = setTimeout(() => {
      (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
      resolve(false);
    }, ms);
  });
  try {
    return await Promise.race([client.query("SELECT 1").then(() => true as const), silent]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A pool whose clients idle for `checkAfterIdleMs` or longer are checked before they are
 * handed out: a connection that went stale while idle (a load balancer or a NAT forgot it, a
 * database failed over without a word) is replaced by another, and the request that found it
 * goes on, instead of failing on it.
 */
function checkedPoolClass(checkAfterIdleMs: number, checkMs: number, max: number): typeof pg.Pool {
  class CheckedPool extends pg.Pool {
    constructor(config?: pg.PoolConfig) {
      super(config);
      this.on("release", (_error: Error | undefined, client: Released) => {
        client[RELEASED] = Date.now();
      });
    }

    // pg's own `query` checks out through here too (with a callback).
    override connect(): Promise<pg.PoolClient>;
    override connect(callback: ConnectCallback): void;
    override connect(callback?: ConnectCallback): Promise<pg.PoolClient> | undefined {
      const checked = this.#checked();
      if (callback === undefined) return checked;
      checked.then(
        (client) => callback(undefined, client, client.release),
        (error: Error) => callback(error, undefined, () => {}),
      );
      return undefined;
    }

    /** When a check last found a stale connection: the clients idle since before then went stale with it. */
    #staleSince = 0;

    async #checked(): Promise<pg.PoolClient> {
      for (let attempt = 0; ; attempt += 1) {
        const client = (await super.connect()) as Released;
        const released = client[RELEASED];
        if (released === undefined || Date.now() - released < checkAfterIdleMs || attempt > max) return client;
        if (released >= this.#staleSince && (await answers(client, checkMs))) return client;
        if (released >= this.#staleSince) this.#staleSince = Date.now();
        client.release(new Error("The connection went stale while idle."));
      }
    }
  }
  return CheckedPool;
}

/**
 * A `pg` pool for chat-serve's backends: checkout and query deadlines, TCP keepalive, idle
 * connections checked before use, and no connection error that can crash the process, idle
 * or checked out.
 */
export function createPostgresPool(options: PostgresPoolOptions): pg.Pool {
  const onConnectionError = options.onConnectionError ?? (() => {});
  const Pool = checkedPoolClass(options.checkAfterIdleMs ?? 1_000, Math.min(1_000, options.timeoutMs / 4), options.max);
  const pool = new Pool({
    connectionString: options.url,
    max: options.max,
    connectionTimeoutMillis: options.timeoutMs,
    keepAlive: true,
    Client: deadlineClientClass(options.timeoutMs, onConnectionError),
  });
  // An idle connection that dies (database restart) is dropped by the pool, which opens
  // new connections when the database is back.
  pool.on("error", onConnectionError);
  return pool;
}
