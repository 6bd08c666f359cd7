import type pg from "pg";
import { BackendUnavailableError } from "../errors/catalogue.js";
import type { CronRecord, CronRecords } from "./cron-records.js";

/** The Agent Protocol's crons in Postgres beside its threads: one row each, keyed by scope, read by every process. */
export class PostgresCronRecords implements CronRecords {
  constructor(
    readonly pool: pg.Pool,
    readonly table: string,
  ) {}

  async #query<R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await this.pool.query<R>(text, values);
    } catch (error) {
      throw new BackendUnavailableError("The cron records could not be reached; retry shortly.", { cause: error });
    }
  }

  async get(scope: string, cronId: string): Promise<CronRecord | undefined> {
    const { rows } = await this.#query<{ record: CronRecord }>(`SELECT record FROM ${this.table} WHERE scope = $1 AND cron_id = $2`, [
      scope,
      cronId,
    ]);
    return rows[0]?.record;
  }

  async put(record: CronRecord): Promise<void> {
    await this.#query(
      `INSERT INTO ${this.table} (scope, cron_id, record, enabled) VALUES ($1, $2, $3, $4)
       ON CONFLICT (scope, cron_id) DO UPDATE SET record = excluded.record, enabled = excluded.enabled`,
      [record.scope, record.cron_id, JSON.stringify(record), record.enabled],
    );
  }

  async delete(scope: string, cronId: string): Promise<boolean> {
    const { rowCount } = await this.#query(`DELETE FROM ${this.table} WHERE scope = $1 AND cron_id = $2`, [scope, cronId]);
    return rowCount === 1;
  }

  async list(scope: string): Promise<CronRecord[]> {
    const { rows } = await this.#query<{ record: CronRecord }>(`SELECT record FROM ${this.table} WHERE scope = $1`, [scope]);
    return rows.map((row) => row.record);
  }

  async claimFiring(scope: string, cronId: string, due: string): Promise<boolean> {
    // One statement: of the processes that mark the same firing, one changes the row.
    const { rowCount } = await this.#query(
      `UPDATE ${this.table} SET record = jsonb_set(record, '{last_fired_at}', to_jsonb($3::text))
       WHERE scope = $1 AND cron_id = $2 AND COALESCE(record->>'last_fired_at', '') < $3`,
      [scope, cronId, due],
    );
    return rowCount === 1;
  }

  async enabled(): Promise<CronRecord[]> {
    const { rows } = await this.#query<{ record: CronRecord }>(`SELECT record FROM ${this.table} WHERE enabled`, []);
    return rows.map((row) => row.record);
  }
}
