import type pg from "pg";
import type { A2aTaskStore, TaskAdvance, TaskRecord } from "./a2a-tasks.js";

interface TaskRow {
  id: string;
  scope: string;
  model: string;
  context_id: string;
  response_id: string;
  canceled: boolean;
  history: Record<string, unknown>[];
  created_at: Date;
  updated_at: Date;
}

const toTask = (row: TaskRow): TaskRecord => ({
  id: row.id,
  scope: row.scope,
  model: row.model,
  contextId: row.context_id,
  responseId: row.response_id,
  canceled: row.canceled,
  history: row.history,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** The A2A tasks of the Postgres store: one row per task, moved on with a compare-and-set. */
export class PostgresA2aTasks implements A2aTaskStore {
  constructor(
    readonly pool: pg.Pool,
    readonly table: string,
  ) {}

  async create(record: TaskRecord): Promise<void> {
    await this.pool.query(
      `INSERT INTO ${this.table} (id, scope, model, context_id, response_id, canceled, history, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        record.id,
        record.scope,
        record.model,
        record.contextId,
        record.responseId,
        record.canceled,
        JSON.stringify(record.history),
        record.createdAt,
        record.updatedAt,
      ],
    );
  }

  async get(scope: string, id: string): Promise<TaskRecord | undefined> {
    const { rows } = await this.pool.query<TaskRow>(`SELECT * FROM ${this.table} WHERE id = $1 AND scope = $2`, [id, scope]);
    return rows[0] === undefined ? undefined : toTask(rows[0]);
  }

  async advance(scope: string, id: string, from: string, update: TaskAdvance): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `UPDATE ${this.table} SET response_id = coalesce($4, response_id), canceled = coalesce($5, canceled),
         history = CASE WHEN $6::jsonb IS NULL THEN history ELSE history || jsonb_build_array($6::jsonb) END, updated_at = now()
       WHERE id = $1 AND scope = $2 AND response_id = $3`,
      [
        id,
        scope,
        from,
        update.responseId ?? null,
        update.canceled ?? null,
        update.message === undefined ? null : JSON.stringify(update.message),
      ],
    );
    return rowCount === 1;
  }

  async inContext(scope: string, contextId: string, limit: number): Promise<TaskRecord[]> {
    const { rows } = await this.pool.query<TaskRow>(
      `SELECT * FROM ${this.table} WHERE scope = $1 AND context_id = $2 ORDER BY updated_at DESC LIMIT $3`,
      [scope, contextId, limit],
    );
    return rows.map(toTask);
  }
}
