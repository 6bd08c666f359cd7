import type pg from "pg";
import { MAX_EXPIRED_MARKS, type PendingRunEntry, type PendingRunIndex, type PendingRunRecord } from "./pending-run-index.js";

function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

interface Row {
  key: string;
  model: string;
  run_id: string;
  scope: string | null;
  created_at: Date;
  last_activity_at: Date;
  expired_at: Date | null;
  thread_id: string | null;
  checkpoint_id: string | null;
}

const toEntry = (row: Row): PendingRunEntry => ({
  key: row.key,
  model: row.model,
  runId: row.run_id,
  scope: row.scope ?? undefined,
  createdAt: row.created_at,
  lastActivityAt: row.last_activity_at,
  expiredAt: row.expired_at ?? undefined,
  ...(row.thread_id === null || row.checkpoint_id === null ? {} : { thread: { threadId: row.thread_id, checkpointId: row.checkpoint_id } }),
});

/** The pending-run index as a table beside the Postgres checkpoints, in the same schema. */
export class PostgresPendingRunIndex implements PendingRunIndex {
  readonly #pool: pg.Pool;
  readonly #table: string;
  readonly #schema: string;

  constructor(pool: pg.Pool, schema = "public") {
    this.#pool = pool;
    this.#schema = quoteIdentifier(schema);
    this.#table = `${this.#schema}.chat_serve_pending_runs`;
  }

  /** Creates the table; run once before serving (the CLI does, before any worker starts). */
  async setup(): Promise<void> {
    await this.#pool.query(`CREATE SCHEMA IF NOT EXISTS ${this.#schema}`);
    await this.#pool.query(`CREATE TABLE IF NOT EXISTS ${this.#table} (
      key text PRIMARY KEY,
      model text NOT NULL,
      run_id uuid NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      last_activity_at timestamptz NOT NULL DEFAULT now()
    )`);
    await this.#pool.query(`CREATE INDEX IF NOT EXISTS chat_serve_pending_runs_activity ON ${this.#table} (last_activity_at)`);
    // Added later: tables made by earlier versions gain them.
    await this.#pool.query(`ALTER TABLE ${this.#table} ADD COLUMN IF NOT EXISTS scope text`);
    await this.#pool.query(`ALTER TABLE ${this.#table} ADD COLUMN IF NOT EXISTS expired_at timestamptz`);
    await this.#pool.query(`ALTER TABLE ${this.#table} ADD COLUMN IF NOT EXISTS thread_id text`);
    await this.#pool.query(`ALTER TABLE ${this.#table} ADD COLUMN IF NOT EXISTS checkpoint_id text`);
  }

  async record(entry: PendingRunRecord): Promise<void> {
    await this.#pool.query(
      `INSERT INTO ${this.#table} (key, model, run_id, scope, thread_id, checkpoint_id) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (key) DO UPDATE SET
         last_activity_at = now(),
         scope = EXCLUDED.scope,
         thread_id = EXCLUDED.thread_id,
         checkpoint_id = EXCLUDED.checkpoint_id,
         created_at = CASE WHEN ${this.#table}.expired_at IS NULL THEN ${this.#table}.created_at ELSE now() END,
         expired_at = NULL`,
      [entry.key, entry.model, entry.runId, entry.scope, entry.thread?.threadId ?? null, entry.thread?.checkpointId ?? null],
    );
  }

  async remove(key: string): Promise<void> {
    await this.#pool.query(`DELETE FROM ${this.#table} WHERE key = $1`, [key]);
  }

  async get(key: string): Promise<PendingRunEntry | undefined> {
    const { rows } = await this.#pool.query<Row>(`SELECT * FROM ${this.#table} WHERE key = $1`, [key]);
    return rows[0] === undefined ? undefined : toEntry(rows[0]);
  }

  async listIdleSince(cutoff: Date): Promise<PendingRunEntry[]> {
    const { rows } = await this.#pool.query<Row>(
      `SELECT * FROM ${this.#table} WHERE expired_at IS NULL AND last_activity_at < $1 ORDER BY last_activity_at`,
      [cutoff],
    );
    return rows.map(toEntry);
  }

  async count(): Promise<number> {
    const { rows } = await this.#pool.query<{ count: string }>(`SELECT count(*) FROM ${this.#table} WHERE expired_at IS NULL`);
    return Number(rows[0]?.count ?? 0);
  }

  async markExpired(key: string): Promise<void> {
    await this.#pool.query(`UPDATE ${this.#table} SET expired_at = now() WHERE key = $1`, [key]);
  }

  async forgetExpiredBefore(cutoff: Date): Promise<void> {
    await this.#pool.query(`DELETE FROM ${this.#table} WHERE expired_at < $1`, [cutoff]);
    await this.#pool.query(
      `DELETE FROM ${this.#table} WHERE key IN (
         SELECT key FROM ${this.#table} WHERE expired_at IS NOT NULL ORDER BY expired_at DESC OFFSET $1)`,
      [MAX_EXPIRED_MARKS],
    );
  }
}
