import type pg from "pg";
import {
  type ConversationRecord,
  type ConversationStore,
  type ConversationUpdate,
  type IdempotencyRecord,
  type ItemPage,
  type ItemPageResult,
  type PurgeResult,
  type ReleasedThread,
  type ResponseRecord,
  type ResponseSummary,
  type SessionTurn,
  type StoredItem,
  UnknownCursorError,
} from "./conversation-store.js";
import { PostgresA2aTasks } from "./postgres-a2a-tasks.js";
import { PostgresAgentRecords } from "./postgres-agent-records.js";
import { PostgresAssistantRecords } from "./postgres-assistant-records.js";
import { PostgresCronRecords } from "./postgres-cron-records.js";
import { PostgresIdempotencyKeys } from "./postgres-idempotency.js";
import { PostgresSessionTurns } from "./postgres-session-turns.js";
import {
  type ConversationRow,
  type ResponseRow,
  storeTables,
  tableStatements,
  toConversation,
  toResponse,
} from "./postgres-store-tables.js";

type Queryable = Pick<pg.Pool | pg.PoolClient, "query">;

/**
 * The store in Postgres, in the schema given (beside the checkpoints when it is theirs). Any
 * process of any host reads what another wrote. The tables are made by `setup()`, once, and
 * only ever gain columns, so a rolling upgrade can run old and new servers side by side.
 */
export class PostgresConversationStore implements ConversationStore {
  readonly durable = true;
  readonly #pool: pg.Pool;
  readonly #schemaName: string;
  readonly #responses: string;
  readonly #conversations: string;
  readonly #items: string;
  readonly #turns: string;
  readonly #idempotency: string;
  readonly #keys: PostgresIdempotencyKeys;
  readonly #sessions: PostgresSessionTurns;
  readonly tasks: PostgresA2aTasks;
  readonly agentRecords: PostgresAgentRecords;
  readonly assistantRecords: PostgresAssistantRecords;
  readonly cronRecords: PostgresCronRecords;

  constructor(pool: pg.Pool, schema = "public") {
    this.#pool = pool;
    this.#schemaName = schema;
    const tables = storeTables(schema);
    this.#responses = tables.responses;
    this.#conversations = tables.conversations;
    this.#items = tables.items;
    this.#turns = tables.turns;
    this.#idempotency = tables.idempotency;
    this.#keys = new PostgresIdempotencyKeys(pool, tables.idempotency);
    this.#sessions = new PostgresSessionTurns(pool, tables.turns);
    this.tasks = new PostgresA2aTasks(pool, tables.tasks);
    this.agentRecords = new PostgresAgentRecords(pool, { threads: tables.agentThreads, runs: tables.agentRuns });
    this.cronRecords = new PostgresCronRecords(pool, tables.agentCrons);
    this.assistantRecords = new PostgresAssistantRecords(pool, tables);
  }

  async setup(): Promise<void> {
    for (const statement of tableStatements(storeTables(this.#schemaName))) await this.#pool.query(statement);
  }

  async check(): Promise<void> {
    await this.#pool.query("SELECT 1");
  }
  async close(): Promise<void> {}
  async #transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.#pool.connect();
    try {
      await client.query("BEGIN");
      const result = await work(client);
      await client.query("COMMIT");
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  /** Of the threads given, those no response, conversation or session turn refers to any more. */
  async #released(db: Queryable, threads: ReleasedThread[]): Promise<ReleasedThread[]> {
    if (threads.length === 0) return [];
    const unique = [...new Map(threads.map((thread) => [thread.threadId, thread])).values()];
    const { rows } = await db.query<{ thread_id: string }>(
      `SELECT t.thread_id FROM unnest($1::text[]) AS t(thread_id)
       WHERE NOT EXISTS (SELECT 1 FROM ${this.#responses} r WHERE r.thread_id = t.thread_id)
         AND NOT EXISTS (SELECT 1 FROM ${this.#conversations} c WHERE c.thread_id = t.thread_id)
         AND NOT EXISTS (SELECT 1 FROM ${this.#turns} s WHERE s.thread_id = t.thread_id)`,
      [unique.map((thread) => thread.threadId)],
    );
    const free = new Set(rows.map((row) => row.thread_id));
    return unique.filter((thread) => free.has(thread.threadId));
  }

  async #append(db: Queryable, conversationId: string, items: StoredItem[]): Promise<number> {
    const { rows } = await db.query<{ next_position: string }>(
      `UPDATE ${this.#conversations} SET next_position = next_position + $2, used_at = now() WHERE id = $1 RETURNING next_position`,
      [conversationId, items.length],
    );
    const next = Number(rows[0]!.next_position);
    if (items.length > 0) {
      const first = next - items.length;
      await db.query(
        `INSERT INTO ${this.#items} (conversation_id, position, id, item)
         SELECT $1, $2::bigint + ordinality - 1, item->>'id', item FROM jsonb_array_elements($3::jsonb) WITH ORDINALITY AS t(item, ordinality)`,
        [conversationId, first, JSON.stringify(items)],
      );
    }
    return next;
  }

  async saveResponse(record: ResponseRecord, conversation?: ConversationUpdate): Promise<boolean> {
    return this.#transaction(async (client) => {
      if (conversation !== undefined) {
        const { rowCount } = await client.query(`SELECT 1 FROM ${this.#conversations} WHERE id = $1 AND scope = $2 FOR UPDATE`, [
          conversation.id,
          record.scope,
        ]);
        if (rowCount === 0) return false;
        const next = await this.#append(client, conversation.id, conversation.items);
        await client.query(
          `UPDATE ${this.#conversations} SET model = $2,
             thread_id = COALESCE($3, thread_id), checkpoint_id = COALESCE($4, checkpoint_id),
             thread_position = CASE WHEN $5 THEN $6 ELSE thread_position END
           WHERE id = $1`,
          [
            conversation.id,
            conversation.model,
            conversation.thread?.threadId ?? null,
            conversation.thread?.checkpointId ?? null,
            conversation.syncThread,
            next,
          ],
        );
      }
      await client.query(
        `INSERT INTO ${this.#responses}
           (id, scope, model, created_at, response, input_items, previous_response_id, conversation_id, thread_id, checkpoint_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
         ON CONFLICT (id) DO UPDATE SET
           response = EXCLUDED.response, input_items = EXCLUDED.input_items,
           thread_id = EXCLUDED.thread_id, checkpoint_id = EXCLUDED.checkpoint_id
         WHERE ${this.#responses}.scope = EXCLUDED.scope`,
        [
          record.id,
          record.scope,
          record.model,
          record.createdAt,
          JSON.stringify(record.response),
          JSON.stringify(record.inputItems),
          record.previousResponseId ?? null,
          record.conversationId ?? null,
          record.thread?.threadId ?? null,
          record.thread?.checkpointId ?? null,
        ],
      );
      return true;
    });
  }

  async getResponse(scope: string, id: string): Promise<ResponseRecord | undefined> {
    const { rows } = await this.#pool.query<ResponseRow>(`SELECT * FROM ${this.#responses} WHERE id = $1 AND scope = $2`, [id, scope]);
    return rows[0] === undefined ? undefined : toResponse(rows[0]);
  }

  async deleteResponse(scope: string, id: string): Promise<{ released: ReleasedThread[] } | undefined> {
    const { rows } = await this.#pool.query<{ model: string; thread_id: string | null }>(
      `DELETE FROM ${this.#responses} WHERE id = $1 AND scope = $2 RETURNING model, thread_id`,
      [id, scope],
    );
    const row = rows[0];
    if (row === undefined) return undefined;
    return { released: row.thread_id === null ? [] : await this.#released(this.#pool, [{ threadId: row.thread_id, model: row.model }]) };
  }

  async createConversation(record: ConversationRecord, items: StoredItem[]): Promise<void> {
    await this.#transaction(async (client) => {
      await client.query(
        `INSERT INTO ${this.#conversations} (id, scope, created_at, used_at, metadata, model) VALUES ($1, $2, $3, $3, $4, $5)`,
        [record.id, record.scope, record.createdAt, JSON.stringify(record.metadata), record.model ?? null],
      );
      await this.#append(client, record.id, items);
    });
  }

  async getConversation(scope: string, id: string): Promise<ConversationRecord | undefined> {
    const { rows } = await this.#pool.query<ConversationRow>(`SELECT * FROM ${this.#conversations} WHERE id = $1 AND scope = $2`, [
      id,
      scope,
    ]);
    return rows[0] === undefined ? undefined : toConversation(rows[0]);
  }

  async updateConversation(scope: string, id: string, metadata: Record<string, string>): Promise<ConversationRecord | undefined> {
    const { rows } = await this.#pool.query<ConversationRow>(
      `UPDATE ${this.#conversations} SET metadata = $3, used_at = now() WHERE id = $1 AND scope = $2 RETURNING *`,
      [id, scope, JSON.stringify(metadata)],
    );
    return rows[0] === undefined ? undefined : toConversation(rows[0]);
  }

  async deleteConversation(scope: string, id: string): Promise<{ released: ReleasedThread[] } | undefined> {
    const { rows } = await this.#pool.query<{ model: string | null; thread_id: string | null }>(
      `DELETE FROM ${this.#conversations} WHERE id = $1 AND scope = $2 RETURNING model, thread_id`,
      [id, scope],
    );
    const row = rows[0];
    if (row === undefined) return undefined;
    const thread = row.thread_id === null || row.model === null ? [] : [{ threadId: row.thread_id, model: row.model }];
    return { released: await this.#released(this.#pool, thread) };
  }

  async addItems(scope: string, conversationId: string, items: StoredItem[]): Promise<boolean> {
    return this.#transaction(async (client) => {
      const { rowCount } = await client.query(`SELECT 1 FROM ${this.#conversations} WHERE id = $1 AND scope = $2 FOR UPDATE`, [
        conversationId,
        scope,
      ]);
      if (rowCount === 0) return false;
      await this.#append(client, conversationId, items);
      return true;
    });
  }

  async #owns(scope: string, conversationId: string): Promise<boolean> {
    const { rowCount } = await this.#pool.query(`SELECT 1 FROM ${this.#conversations} WHERE id = $1 AND scope = $2`, [
      conversationId,
      scope,
    ]);
    return rowCount !== 0;
  }

  async listItems(scope: string, conversationId: string, page: ItemPage): Promise<ItemPageResult | undefined> {
    if (!(await this.#owns(scope, conversationId))) return undefined;
    let cursor: string | null = null;
    if (page.after !== undefined) {
      const { rows } = await this.#pool.query<{ position: string }>(
        `SELECT position FROM ${this.#items} WHERE conversation_id = $1 AND id = $2`,
        [conversationId, page.after],
      );
      if (rows[0] === undefined) throw new UnknownCursorError(page.after);
      cursor = rows[0].position;
    }
    const direction = page.order === "asc" ? "ASC" : "DESC";
    const comparison = page.order === "asc" ? ">" : "<";
    const { rows } = await this.#pool.query<{ item: StoredItem }>(
      `SELECT item FROM ${this.#items} WHERE conversation_id = $1 AND ($2::bigint IS NULL OR position ${comparison} $2::bigint)
       ORDER BY position ${direction} LIMIT $3`,
      [conversationId, cursor, page.limit + 1],
    );
    return { items: rows.slice(0, page.limit).map((row) => row.item), hasMore: rows.length > page.limit };
  }

  async itemsSince(
    scope: string,
    conversationId: string,
    fromPosition: number,
  ): Promise<{ items: StoredItem[]; position: number } | undefined> {
    const { rows: owner } = await this.#pool.query<{ next_position: string }>(
      `SELECT next_position FROM ${this.#conversations} WHERE id = $1 AND scope = $2`,
      [conversationId, scope],
    );
    if (owner[0] === undefined) return undefined;
    const { rows } = await this.#pool.query<{ item: StoredItem }>(
      `SELECT item FROM ${this.#items} WHERE conversation_id = $1 AND position >= $2 ORDER BY position`,
      [conversationId, fromPosition],
    );
    return { items: rows.map((row) => row.item), position: Number(owner[0].next_position) };
  }

  async getItem(scope: string, conversationId: string, itemId: string): Promise<StoredItem | undefined> {
    const { rows } = await this.#pool.query<{ item: StoredItem }>(
      `SELECT i.item FROM ${this.#items} i JOIN ${this.#conversations} c ON c.id = i.conversation_id
       WHERE i.conversation_id = $1 AND c.scope = $2 AND i.id = $3`,
      [conversationId, scope, itemId],
    );
    return rows[0]?.item;
  }

  async deleteItem(scope: string, conversationId: string, itemId: string): Promise<boolean> {
    const { rowCount } = await this.#pool.query(
      `DELETE FROM ${this.#items} i USING ${this.#conversations} c
       WHERE c.id = i.conversation_id AND i.conversation_id = $1 AND c.scope = $2 AND i.id = $3`,
      [conversationId, scope, itemId],
    );
    return rowCount !== 0;
  }

  sessionTurns(sessionKey: string): Promise<SessionTurn[]> {
    return this.#sessions.turns(sessionKey);
  }

  addSessionTurn(sessionKey: string, owner: { scope: string; model: string }, turn: SessionTurn): Promise<void> {
    return this.#sessions.add(sessionKey, owner, turn);
  }

  claimIdempotencyKey(scope: string, key: string, bodyHash: string): Promise<IdempotencyRecord | undefined> {
    return this.#keys.claim(scope, key, bodyHash);
  }

  getIdempotencyKey(scope: string, key: string): Promise<IdempotencyRecord | undefined> {
    return this.#keys.get(scope, key);
  }

  settleIdempotencyKey(scope: string, key: string, result: NonNullable<IdempotencyRecord["result"]>): Promise<void> {
    return this.#keys.settle(scope, key, result);
  }

  releaseIdempotencyKey(scope: string, key: string): Promise<void> {
    return this.#keys.release(scope, key);
  }

  async listResponses(filter: { status?: string; limit: number }): Promise<ResponseSummary[]> {
    const { rows } = await this.#pool.query<{
      id: string;
      scope: string;
      model: string;
      status: string;
      background: boolean;
      created_at: Date;
    }>(
      `SELECT id, scope, model, response->>'status' AS status, coalesce((response->>'background')::boolean, false) AS background, created_at
       FROM ${this.#responses} WHERE ($1::text IS NULL OR response->>'status' = $1) ORDER BY created_at DESC LIMIT $2`,
      [filter.status ?? null, filter.limit],
    );
    return rows.map((row) => ({
      id: row.id,
      scope: row.scope,
      model: row.model,
      status: row.status,
      background: row.background,
      createdAt: row.created_at,
    }));
  }

  async failUnfinished(message: string): Promise<number> {
    const { rowCount } = await this.#pool.query(
      `UPDATE ${this.#responses}
       SET response = response || jsonb_build_object('status', 'failed', 'error', jsonb_build_object('code', 'server_error', 'message', $1::text), 'completed_at', extract(epoch from now())::bigint)
       WHERE response->>'status' IN ('queued', 'in_progress')`,
      [message],
    );
    return rowCount ?? 0;
  }

  async purgeOlderThan(cutoff: Date, options: { dryRun?: boolean } = {}): Promise<PurgeResult> {
    if (options.dryRun === true) {
      const { rows } = await this.#pool.query<{ responses: string; conversations: string; sessions: string }>(
        `SELECT (SELECT count(*) FROM ${this.#responses} WHERE created_at < $1) AS responses,
                (SELECT count(*) FROM ${this.#conversations} WHERE used_at < $1) AS conversations,
                (SELECT count(DISTINCT session_key) FROM ${this.#turns} WHERE created_at < $1) AS sessions`,
        [cutoff],
      );
      const row = rows[0]!;
      return { responses: Number(row.responses), conversations: Number(row.conversations), sessions: Number(row.sessions), threads: [] };
    }
    return this.#transaction(async (client) => {
      const responses = await client.query<{ model: string; thread_id: string | null }>(
        `DELETE FROM ${this.#responses} WHERE created_at < $1 RETURNING model, thread_id`,
        [cutoff],
      );
      const conversations = await client.query<{ model: string | null; thread_id: string | null }>(
        `DELETE FROM ${this.#conversations} WHERE used_at < $1 RETURNING model, thread_id`,
        [cutoff],
      );
      await client.query(`DELETE FROM ${this.#idempotency} WHERE created_at < $1`, [cutoff]);
      await client.query(`DELETE FROM ${this.tasks.table} WHERE updated_at < $1`, [cutoff]);
      const turns = await client.query<{ session_key: string; model: string; thread_id: string }>(
        `DELETE FROM ${this.#turns} WHERE created_at < $1 RETURNING session_key, model, thread_id`,
        [cutoff],
      );
      const candidates: ReleasedThread[] = [...responses.rows, ...conversations.rows, ...turns.rows].flatMap((row) =>
        row.thread_id === null || row.model === null ? [] : [{ threadId: row.thread_id, model: row.model }],
      );
      return {
        responses: responses.rowCount ?? 0,
        conversations: conversations.rowCount ?? 0,
        sessions: new Set(turns.rows.map((row) => row.session_key)).size,
        threads: await this.#released(client, candidates),
      };
    });
  }
}
