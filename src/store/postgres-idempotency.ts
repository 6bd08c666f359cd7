import type pg from "pg";
import type { IdempotencyRecord } from "./conversation-store.js";

/** The idempotency keys of the Postgres store: one row per scope and key, claimed atomically. */
export class PostgresIdempotencyKeys {
  readonly #pool: pg.Pool;
  readonly #table: string;

  constructor(pool: pg.Pool, table: string) {
    this.#pool = pool;
    this.#table = table;
  }

  async claim(scope: string, key: string, bodyHash: string): Promise<IdempotencyRecord | undefined> {
    const { rowCount } = await this.#pool.query(
      `INSERT INTO ${this.#table} (scope, key, body_hash) VALUES ($1, $2, $3) ON CONFLICT (scope, key) DO NOTHING`,
      [scope, key, bodyHash],
    );
    if (rowCount === 1) return undefined;
    // Held by another request (or released in between: then this one may try again).
    return (await this.get(scope, key)) ?? { bodyHash };
  }

  async get(scope: string, key: string): Promise<IdempotencyRecord | undefined> {
    const { rows } = await this.#pool.query<{ body_hash: string; status: number | null; content_type: string | null; body: string | null }>(
      `SELECT body_hash, status, content_type, body FROM ${this.#table} WHERE scope = $1 AND key = $2`,
      [scope, key],
    );
    const row = rows[0];
    if (row === undefined) return undefined;
    return {
      bodyHash: row.body_hash,
      ...(row.status === null ? {} : { result: { status: row.status, contentType: row.content_type ?? "", body: row.body ?? "" } }),
    };
  }

  async settle(scope: string, key: string, result: NonNullable<IdempotencyRecord["result"]>): Promise<void> {
    await this.#pool.query(`UPDATE ${this.#table} SET status = $3, content_type = $4, body = $5 WHERE scope = $1 AND key = $2`, [
      scope,
      key,
      result.status,
      result.contentType,
      result.body,
    ]);
  }

  async release(scope: string, key: string): Promise<void> {
    await this.#pool.query(`DELETE FROM ${this.#table} WHERE scope = $1 AND key = $2`, [scope, key]);
  }
}
