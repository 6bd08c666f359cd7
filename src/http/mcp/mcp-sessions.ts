import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";

/** One MCP session: its server and transport, who opened it, and what it is doing. */
export interface McpSession {
  id: string;
  /** The caller that opened it (tenant and models); another caller is told it does not exist. */
  owner: string;
  server: Server;
  transport: WebStandardStreamableHTTPServerTransport;
  lastSeen: number;
  /** HTTP requests of the session still open (a call's stream, the GET stream). */
  open: number;
}

/**
 * The sessions of one process. It owns them: a session idle (no open request) for `idleMs`
 * is closed by the sweep, the least recently used idle one makes room when there are
 * `max`, and `close()` ends them all (and the sweep's timer).
 */
export class McpSessions {
  readonly #sessions = new Map<string, McpSession>();
  readonly #timer: NodeJS.Timeout;

  constructor(
    private readonly idleMs: number,
    private readonly max: number,
  ) {
    this.#timer = setInterval(() => void this.sweep(), Math.min(idleMs, 60_000));
    this.#timer.unref();
  }

  get size(): number {
    return this.#sessions.size;
  }

  get(id: string): McpSession | undefined {
    return this.#sessions.get(id);
  }

  /** Adds a session; false when every slot holds a session still in use. */
  async add(session: McpSession): Promise<boolean> {
    if (this.#sessions.size >= this.max) {
      const idle = [...this.#sessions.values()].filter((candidate) => candidate.open === 0).sort((a, b) => a.lastSeen - b.lastSeen)[0];
      if (idle === undefined) return false;
      await this.end(idle);
    }
    this.#sessions.set(session.id, session);
    return true;
  }

  /** Forgets a session whose transport closed (a DELETE, or `end`). */
  forget(id: string | undefined): void {
    if (id !== undefined) this.#sessions.delete(id);
  }

  /** A request of the session begins; the returned function ends it. */
  use(session: McpSession): () => void {
    session.open += 1;
    session.lastSeen = Date.now();
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      session.open -= 1;
      session.lastSeen = Date.now();
    };
  }

  async end(session: McpSession): Promise<void> {
    this.#sessions.delete(session.id);
    await session.server.close().catch(() => {});
  }

  /** Closes the sessions idle for longer than `idleMs`. */
  async sweep(now = Date.now()): Promise<void> {
    const idle = [...this.#sessions.values()].filter((session) => session.open === 0 && now - session.lastSeen >= this.idleMs);
    await Promise.all(idle.map((session) => this.end(session)));
  }

  /** Ends every session and the sweep. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    await Promise.all([...this.#sessions.values()].map((session) => this.end(session)));
  }
}
