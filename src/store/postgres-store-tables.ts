import type { ConversationRecord, ResponseRecord, StoredItem, ThreadPoint } from "./conversation-store.js";

// The Postgres store's tables: their names, how they are made, and how a row reads back.

function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

export interface ResponseRow {
  id: string;
  scope: string;
  model: string;
  created_at: Date;
  response: Record<string, unknown>;
  input_items: StoredItem[];
  previous_response_id: string | null;
  conversation_id: string | null;
  thread_id: string | null;
  checkpoint_id: string | null;
}

export interface ConversationRow {
  id: string;
  scope: string;
  created_at: Date;
  metadata: Record<string, string>;
  model: string | null;
  thread_id: string | null;
  checkpoint_id: string | null;
  thread_position: string;
  next_position: string;
  instructions: string | null;
}

const threadOf = (row: { thread_id: string | null; checkpoint_id: string | null }): ThreadPoint | undefined =>
  row.thread_id === null || row.checkpoint_id === null ? undefined : { threadId: row.thread_id, checkpointId: row.checkpoint_id };

export const toResponse = (row: ResponseRow): ResponseRecord => ({
  id: row.id,
  scope: row.scope,
  model: row.model,
  createdAt: row.created_at,
  response: row.response,
  inputItems: row.input_items,
  ...(row.previous_response_id === null ? {} : { previousResponseId: row.previous_response_id }),
  ...(row.conversation_id === null ? {} : { conversationId: row.conversation_id }),
  ...(threadOf(row) === undefined ? {} : { thread: threadOf(row) }),
});

export const toConversation = (row: ConversationRow): ConversationRecord => ({
  id: row.id,
  scope: row.scope,
  createdAt: row.created_at,
  metadata: row.metadata,
  ...(row.model === null ? {} : { model: row.model }),
  ...(threadOf(row) === undefined ? {} : { thread: threadOf(row) }),
  threadPosition: Number(row.thread_position),
  ...(row.instructions === null ? {} : { instructions: row.instructions }),
});

/** The qualified names of the store's tables in one schema. */
export interface StoreTables {
  schema: string;
  responses: string;
  conversations: string;
  items: string;
  turns: string;
  idempotency: string;
  tasks: string;
  agentThreads: string;
  agentRuns: string;
  agentAssistants: string;
  agentAssistantVersions: string;
  agentCrons: string;
}

export function storeTables(schema: string): StoreTables {
  const quoted = quoteIdentifier(schema);
  return {
    schema: quoted,
    responses: `${quoted}.chat_serve_responses`,
    conversations: `${quoted}.chat_serve_conversations`,
    items: `${quoted}.chat_serve_conversation_items`,
    turns: `${quoted}.chat_serve_session_turns`,
    idempotency: `${quoted}.chat_serve_idempotency`,
    tasks: `${quoted}.chat_serve_a2a_tasks`,
    agentThreads: `${quoted}.chat_serve_agent_threads`,
    agentRuns: `${quoted}.chat_serve_agent_runs`,
    agentAssistants: `${quoted}.chat_serve_agent_assistants`,
    agentAssistantVersions: `${quoted}.chat_serve_agent_assistant_versions`,
    agentCrons: `${quoted}.chat_serve_agent_crons`,
  };
}

/**
 * The statements that make the tables, safe to run again: they create what is missing and
 * add the columns later versions added, never drop or rewrite, so old and new servers can
 * share a database through a rolling upgrade.
 */
export function tableStatements(tables: StoreTables): string[] {
  return [
    `CREATE SCHEMA IF NOT EXISTS ${tables.schema}`,
    `CREATE TABLE IF NOT EXISTS ${tables.responses} (
      id text PRIMARY KEY,
      scope text NOT NULL,
      model text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      response jsonb NOT NULL,
      input_items jsonb NOT NULL,
      previous_response_id text,
      conversation_id text,
      thread_id text,
      checkpoint_id text
    )`,
    `CREATE INDEX IF NOT EXISTS chat_serve_responses_created ON ${tables.responses} (created_at)`,
    `CREATE INDEX IF NOT EXISTS chat_serve_responses_thread ON ${tables.responses} (thread_id)`,
    `CREATE TABLE IF NOT EXISTS ${tables.conversations} (
      id text PRIMARY KEY,
      scope text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      used_at timestamptz NOT NULL DEFAULT now(),
      metadata jsonb NOT NULL,
      model text,
      thread_id text,
      checkpoint_id text,
      thread_position bigint NOT NULL DEFAULT 0,
      next_position bigint NOT NULL DEFAULT 1
    )`,
    `CREATE INDEX IF NOT EXISTS chat_serve_conversations_used ON ${tables.conversations} (used_at)`,
    // Added after the first version: tables made before gain it.
    `ALTER TABLE ${tables.conversations} ADD COLUMN IF NOT EXISTS instructions text`,
    `CREATE INDEX IF NOT EXISTS chat_serve_conversations_thread ON ${tables.conversations} (thread_id)`,
    `CREATE TABLE IF NOT EXISTS ${tables.items} (
      conversation_id text NOT NULL REFERENCES ${tables.conversations} (id) ON DELETE CASCADE,
      position bigint NOT NULL,
      id text NOT NULL,
      item jsonb NOT NULL,
      PRIMARY KEY (conversation_id, position)
    )`,
    `CREATE INDEX IF NOT EXISTS chat_serve_conversation_items_id ON ${tables.items} (conversation_id, id)`,
    `CREATE TABLE IF NOT EXISTS ${tables.turns} (
      session_key text NOT NULL,
      hash text NOT NULL,
      scope text NOT NULL,
      model text NOT NULL,
      length integer NOT NULL,
      thread_id text NOT NULL,
      checkpoint_id text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (session_key, hash)
    )`,
    `CREATE INDEX IF NOT EXISTS chat_serve_session_turns_created ON ${tables.turns} (created_at)`,
    `CREATE INDEX IF NOT EXISTS chat_serve_session_turns_thread ON ${tables.turns} (thread_id)`,
    `CREATE TABLE IF NOT EXISTS ${tables.idempotency} (
      scope text NOT NULL,
      key text NOT NULL,
      body_hash text NOT NULL,
      status integer,
      content_type text,
      body text,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (scope, key)
    )`,
    `CREATE INDEX IF NOT EXISTS chat_serve_idempotency_created ON ${tables.idempotency} (created_at)`,
    `CREATE TABLE IF NOT EXISTS ${tables.tasks} (
      id text PRIMARY KEY,
      scope text NOT NULL,
      model text NOT NULL,
      context_id text NOT NULL,
      response_id text NOT NULL,
      canceled boolean NOT NULL DEFAULT false,
      history jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`,
    `CREATE INDEX IF NOT EXISTS chat_serve_a2a_tasks_context ON ${tables.tasks} (scope, context_id, updated_at)`,
    `CREATE INDEX IF NOT EXISTS chat_serve_a2a_tasks_updated ON ${tables.tasks} (updated_at)`,
    // The LangGraph Agent Protocol's threads and runs.
    `CREATE TABLE IF NOT EXISTS ${tables.agentThreads} (
      scope text NOT NULL,
      thread_id text NOT NULL,
      record jsonb NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (scope, thread_id)
    )`,
    `CREATE TABLE IF NOT EXISTS ${tables.agentRuns} (
      scope text NOT NULL,
      run_id text NOT NULL,
      thread_id text NOT NULL,
      record jsonb NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (scope, run_id)
    )`,
    `CREATE INDEX IF NOT EXISTS chat_serve_agent_runs_thread ON ${tables.agentRuns} (scope, thread_id, created_at)`,
    // The assistants clients make: the current version of each, and every version.
    `CREATE TABLE IF NOT EXISTS ${tables.agentAssistants} (
      scope text NOT NULL,
      assistant_id text NOT NULL,
      record jsonb NOT NULL,
      PRIMARY KEY (scope, assistant_id)
    )`,
    `CREATE TABLE IF NOT EXISTS ${tables.agentAssistantVersions} (
      scope text NOT NULL,
      assistant_id text NOT NULL,
      version integer NOT NULL,
      record jsonb NOT NULL,
      PRIMARY KEY (scope, assistant_id, version)
    )`,
    // The crons: each a run made on a schedule.
    `CREATE TABLE IF NOT EXISTS ${tables.agentCrons} (
      scope text NOT NULL,
      cron_id text NOT NULL,
      record jsonb NOT NULL,
      enabled boolean NOT NULL,
      PRIMARY KEY (scope, cron_id)
    )`,
  ];
}
