import type pg from "pg";
import type { SessionTurn } from "./conversation-store.js";

/** The turns of chat sessions in the Postgres store: one row per session and history hash. */
export class PostgresSessionTurns {
  constructor(
    readonly pool: pg.Pool,
    readonly table: string,
  ) {}

  async turns(sessionKey: string): Promise<SessionTurn[]> {
    const { rows } = await this.pool.query<{ length: number; hash: string; thread_id: string; checkpoint_id: string }>(
      `SELECT length, hash, thread_id, checkpoint_id FROM ${this.table} WHERE session_key = $1 ORDER BY length DESC, created_at DESC`,
      [sessionKey],
    );
    return rows.map((row) => ({
      length: row.length,
      hash: row.hash,
      thread: { threadId: row.thread_id, checkpointId: row.checkpoint_id },
    }));
  }

  async add(sessionKey: string, owner: { scope: string; model: string }, turn: SessionTurn): Promise<void> {
    await this.pool.query(
      `INSERT INTO ${this.table} (session_key, hash, scope, model, length, thread_id, checkpoint_id) VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (session_key, hash) DO UPDATE SET thread_id = EXCLUDED.thread_id, checkpoint_id = EXCLUDED.checkpoint_id, created_at = now()`,
      [sessionKey, turn.hash, owner.scope, owner.model, turn.length, turn.thread.threadId, turn.thread.checkpointId],
    );
    // The whole session stays as long as it is used.
    await this.pool.query(`UPDATE ${this.table} SET created_at = now() WHERE session_key = $1`, [sessionKey]);
  }
}
