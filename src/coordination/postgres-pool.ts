import pg from "pg";

export interface PostgresPoolOptions {
  url: string;
  max: number;
  /** Deadline of a connection checkout (connecting included) and of every query. */
  timeoutMs: number;
  /** Told about connection errors; they never reach the process as an unhandled 'error'. */
  onConnectionError?: (error: Error) => void;
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

/**
 * A `pg` pool for chat-serve's backends: checkout and query deadlines, TCP keepalive, and no
 * connection error that can crash the process, idle or checked out.
 */
export function createPostgresPool(options: PostgresPoolOptions): pg.Pool {
  const onConnectionError = options.onConnectionError ?? (() => {});
  const pool = new pg.Pool({
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
