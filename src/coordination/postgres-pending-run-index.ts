import type pg from "pg";
import type { PendingRunEntry, PendingRunIndex } from "./pending-run-index.js";

function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

interface Row {
  key: string;
  model: string;
  run_id: string;
  created_at: Date;
  last_activity_at: Date;
}

const toEntry = (row: Row): PendingRunEntry => ({
  key: row.key,
  model: row.model,
  runId: row.run_id,
  createdAt: row.created_at,
  lastActivityAt: row.last_activity_at,
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
  }

  async record(entry: { key: string; model: string; runId: string }): Promise<void> {
    await this.#pool.query(
      `INSERT INTO ${this.#table} (key, model, run_id) VALUES ($1, $2, $3)
       ON CONFLICT (key) DO UPDATE SET last_activity_at = now()`,
      [entry.key, entry.model, entry.runId],
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
    const { rows } = await this.#pool.query<Row>(`SELECT * FROM ${this.#table} WHERE last_activity_at < $1 ORDER BY last_activity_at`, [
      cutoff,
    ]);
    return rows.map(toEntry);
  }
}
