import type pg from "pg";
import { BackendUnavailableError } from "../errors/catalogue.js";
import type { AgentRecords, AgentRunRecord, AgentThreadRecord } from "./agent-records.js";

/**
 * The Agent Protocol's threads and runs in Postgres, beside the store's other tables: one row
 * each, the record as JSON, keyed by scope so that a tenant's read never finds another's.
 * Every process and host reads what another wrote; a restart forgets nothing.
 */
export class PostgresAgentRecords implements AgentRecords {
  constructor(
    readonly pool: pg.Pool,
    readonly tables: { threads: string; runs: string },
  ) {}

  /** A query; a database that fails (down, stalled, refusing) is `backend_unavailable`, naming the records. */
  async #query<R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await this.pool.query<R>(text, values);
    } catch (error) {
      throw new BackendUnavailableError("The thread records could not be reached; retry shortly.", { cause: error });
    }
  }

  async getThread(scope: string, threadId: string): Promise<AgentThreadRecord | undefined> {
    const { rows } = await this.#query<{ record: AgentThreadRecord }>(
      `SELECT record FROM ${this.tables.threads} WHERE scope = $1 AND thread_id = $2`,
      [scope, threadId],
    );
    return rows[0]?.record;
  }

  async putThread(record: AgentThreadRecord): Promise<void> {
    await this.#query(
      `INSERT INTO ${this.tables.threads} (scope, thread_id, record, updated_at) VALUES ($1, $2, $3, now())
       ON CONFLICT (scope, thread_id) DO UPDATE SET record = excluded.record, updated_at = now()`,
      [record.scope, record.thread_id, JSON.stringify(record)],
    );
  }

  async deleteThread(scope: string, threadId: string): Promise<boolean> {
    const { rowCount } = await this.#query(`DELETE FROM ${this.tables.threads} WHERE scope = $1 AND thread_id = $2`, [scope, threadId]);
    await this.#query(`DELETE FROM ${this.tables.runs} WHERE scope = $1 AND thread_id = $2`, [scope, threadId]);
    return rowCount === 1;
  }

  async listThreads(scope: string): Promise<AgentThreadRecord[]> {
    const { rows } = await this.#query<{ record: AgentThreadRecord }>(`SELECT record FROM ${this.tables.threads} WHERE scope = $1`, [
      scope,
    ]);
    return rows.map((row) => row.record);
  }

  async expiredThreads(now: Date, defaultMinutes: number | undefined, limit: number): Promise<AgentThreadRecord[]> {
    // A scan of the threads with a time to live, once a sweep: no index to keep for it.
    const { rows } = await this.#query<{ record: AgentThreadRecord }>(
      `SELECT record FROM ${this.tables.threads}
       WHERE COALESCE((record->>'ttl_minutes')::float8, $2::float8) IS NOT NULL
         AND (record->>'updated_at')::timestamptz + COALESCE((record->>'ttl_minutes')::float8, $2::float8) * interval '1 minute' <= $1
         AND (record->>'pruned_at') IS DISTINCT FROM (record->>'updated_at')
       ORDER BY (record->>'updated_at')::timestamptz LIMIT $3`,
      [now.toISOString(), defaultMinutes ?? null, limit],
    );
    return rows.map((row) => row.record);
  }

  async getRun(scope: string, runId: string): Promise<AgentRunRecord | undefined> {
    const { rows } = await this.#query<{ record: AgentRunRecord }>(
      `SELECT record FROM ${this.tables.runs} WHERE scope = $1 AND run_id = $2`,
      [scope, runId],
    );
    return rows[0]?.record;
  }

  async putRun(record: AgentRunRecord): Promise<void> {
    await this.#query(
      `INSERT INTO ${this.tables.runs} (scope, run_id, thread_id, record, created_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (scope, run_id) DO UPDATE SET record = excluded.record`,
      [record.scope, record.run_id, record.thread_id, JSON.stringify(record), record.created_at],
    );
  }

  async deleteRun(scope: string, runId: string): Promise<boolean> {
    const { rowCount } = await this.#query(`DELETE FROM ${this.tables.runs} WHERE scope = $1 AND run_id = $2`, [scope, runId]);
    return rowCount === 1;
  }

  async listRuns(scope: string, threadId: string): Promise<AgentRunRecord[]> {
    const { rows } = await this.#query<{ record: AgentRunRecord }>(
      `SELECT record FROM ${this.tables.runs} WHERE scope = $1 AND thread_id = $2 ORDER BY created_at DESC, run_id DESC`,
      [scope, threadId],
    );
    return rows.map((row) => row.record);
  }
}
