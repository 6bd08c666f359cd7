import type pg from "pg";
import { AgentConflictError, BackendUnavailableError } from "../errors/catalogue.js";
import type { AssistantRecord, AssistantRecords } from "./assistant-records.js";

/**
 * The assistants clients make, in Postgres beside the threads: the current version of each in
 * one table, every version in another, keyed by scope. Every process reads what another wrote.
 */
export class PostgresAssistantRecords implements AssistantRecords {
  readonly tables: { assistants: string; versions: string };

  constructor(
    readonly pool: pg.Pool,
    tables: { agentAssistants: string; agentAssistantVersions: string },
  ) {
    this.tables = { assistants: tables.agentAssistants, versions: tables.agentAssistantVersions };
  }

  async #query<R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await this.pool.query<R>(text, values);
    } catch (error) {
      // Two updates of one assistant at once made the same version: the later is the client's to retry.
      if ((error as { code?: unknown }).code === "23505") {
        throw new AgentConflictError("The assistant was changed by another request at the same moment; retry.");
      }
      throw new BackendUnavailableError("The assistant records could not be reached; retry shortly.", { cause: error });
    }
  }

  async get(scope: string, assistantId: string): Promise<AssistantRecord | undefined> {
    const { rows } = await this.#query<{ record: AssistantRecord }>(
      `SELECT record FROM ${this.tables.assistants} WHERE scope = $1 AND assistant_id = $2`,
      [scope, assistantId],
    );
    return rows[0]?.record;
  }

  async list(scope: string): Promise<AssistantRecord[]> {
    const { rows } = await this.#query<{ record: AssistantRecord }>(`SELECT record FROM ${this.tables.assistants} WHERE scope = $1`, [
      scope,
    ]);
    return rows.map((row) => row.record);
  }

  async versions(scope: string, assistantId: string): Promise<AssistantRecord[]> {
    const { rows } = await this.#query<{ record: AssistantRecord }>(
      `SELECT record FROM ${this.tables.versions} WHERE scope = $1 AND assistant_id = $2 ORDER BY version DESC`,
      [scope, assistantId],
    );
    return rows.map((row) => row.record);
  }

  async putVersion(record: AssistantRecord): Promise<void> {
    const values = [record.scope, record.assistant_id, record.version, JSON.stringify(record)];
    // One statement: the version and the current record are written together or not at all.
    await this.#query(
      `WITH version AS (
         INSERT INTO ${this.tables.versions} (scope, assistant_id, version, record) VALUES ($1, $2, $3, $4)
       )
       INSERT INTO ${this.tables.assistants} (scope, assistant_id, record) VALUES ($1, $2, $4)
       ON CONFLICT (scope, assistant_id) DO UPDATE SET record = excluded.record`,
      values,
    );
  }

  async setCurrent(scope: string, assistantId: string, version: number, at: string): Promise<AssistantRecord | undefined> {
    const { rows } = await this.#query<{ record: AssistantRecord }>(
      `UPDATE ${this.tables.assistants} a
         SET record = v.record || jsonb_build_object('created_at', a.record->'created_at', 'updated_at', $4::text)
       FROM ${this.tables.versions} v
       WHERE a.scope = $1 AND a.assistant_id = $2 AND v.scope = $1 AND v.assistant_id = $2 AND v.version = $3
       RETURNING a.record`,
      [scope, assistantId, version, at],
    );
    return rows[0]?.record;
  }

  async delete(scope: string, assistantId: string): Promise<boolean> {
    const { rows } = await this.#query<{ deleted: boolean }>(
      `WITH versions AS (DELETE FROM ${this.tables.versions} WHERE scope = $1 AND assistant_id = $2)
       DELETE FROM ${this.tables.assistants} WHERE scope = $1 AND assistant_id = $2 RETURNING true AS deleted`,
      [scope, assistantId],
    );
    return rows.length > 0;
  }
}
