import type { RedisSessions, SessionMessage } from "../../background/redis-sessions.js";
import type { McpSession, McpSessions } from "./mcp-sessions.js";

/** What a session's record in Redis holds: who opened it, and the initialize request that did. */
export interface SharedMcpSession {
  owner: string;
  tenant: string;
  initialize: unknown;
}

const KIND = "mcp";

/** JSON-RPC responses (an answer to a question the server asked): they go to whichever process asked. */
function responses(body: unknown): unknown[] {
  const list = Array.isArray(body) ? body : [body];
  return list.filter(
    (message) =>
      typeof message === "object" &&
      message !== null &&
      !("method" in message) &&
      "id" in message &&
      ("result" in message || "error" in message),
  );
}

/**
 * MCP sessions on a deployment's Redis: a session opened on one process is recorded there
 * (its owner and its initialize request), so any process that gets a request of it opens its
 * own copy (`McpSessions` holds it, the idle sweep ends it). An answer to an elicitation that
 * reaches another process than the one that asked goes to every process holding the session;
 * a DELETE ends the session everywhere. The record expires when no process used the session
 * for `ttlMs`.
 */
export class McpSharedSessions {
  readonly #directory: RedisSessions;
  readonly #sessions: McpSessions;
  readonly #ttlMs: number;
  readonly #stop: () => void;

  constructor(directory: RedisSessions, sessions: McpSessions, ttlMs: number) {
    this.#directory = directory;
    this.#sessions = sessions;
    this.#ttlMs = ttlMs;
    this.#stop = directory.listen((message) => this.#heard(message));
  }

  /** Records a session this process opened. */
  record(session: McpSession, initialize: unknown): Promise<void> {
    const record: SharedMcpSession = { owner: session.owner, tenant: session.tenant, initialize };
    return this.#directory.put(KIND, session.id, record, this.#ttlMs);
  }

  /** A session another process opened, if it is still there. */
  async find(id: string): Promise<SharedMcpSession | undefined> {
    const record = (await this.#directory.get(KIND, id)) as SharedMcpSession | undefined;
    return typeof record?.owner === "string" ? record : undefined;
  }

  /** The session was used here: its record lives on (a failure only shortens its life). */
  touch(id: string): void {
    this.#directory.touch(KIND, id, this.#ttlMs).catch(() => {});
  }

  /** What a POST of the session carries that another process may be waiting for. */
  async received(id: string, body: unknown): Promise<void> {
    const answers = responses(body);
    if (answers.length > 0) await this.#directory.publish({ session: id, messages: answers });
  }

  /** The client ended the session: so does every process. */
  async ended(id: string): Promise<void> {
    await this.#directory.delete(KIND, id);
    await this.#directory.publish({ session: id, ended: true });
  }

  #heard(message: SessionMessage): void {
    const session = this.#sessions.get(message.session);
    if (session === undefined) return;
    if (message.ended === true) {
      void this.#sessions.end(session);
      return;
    }
    // As if the answer had reached this process's transport: the question waiting here gets it.
    for (const answer of message.messages ?? []) session.transport.onmessage?.(answer as never);
  }

  close(): void {
    this.#stop();
  }
}
