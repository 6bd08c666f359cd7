import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";

/** One MCP session: its server and transport, who opened it, and what it is doing. */
export interface McpSession {
  id: string;
  /** The caller that opened it (tenant and models); another caller is told it does not exist. */
  owner: string;
  /** The caller's tenant ("" without keys): what the per-tenant cap counts by. */
  tenant: string;
  server: Server;
  transport: WebStandardStreamableHTTPServerTransport;
  lastSeen: number;
  /** HTTP requests of the session still open (a call's stream, the GET stream). */
  open: number;
}

/**
 * The sessions of one process. It owns them: a session idle (no open request) for `idleMs`
 * is closed by the sweep, and `close()` ends them all (and the sweep's timer). Two caps keep one
 * tenant from taking the others' sessions: a tenant with `perTenant` sessions makes room among
 * its own (its least recently used idle one), and when the process holds `max`, room is made in
 * the tenant that holds the most.
 */
export class McpSessions {
  readonly #sessions = new Map<string, McpSession>();
  readonly #timer: NodeJS.Timeout;

  constructor(
    private readonly idleMs: number,
    private readonly max: number,
    private readonly perTenant: number = max,
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

  /** Adds a session; false when the slots it may take all hold sessions still in use. */
  async add(session: McpSession): Promise<boolean> {
    const own = this.#ofTenant(session.tenant);
    if (own.length >= this.perTenant) {
      if (!(await this.#endLeastRecentIdle(own))) return false;
    } else if (this.#sessions.size >= this.max) {
      const byTenant = new Map<string, McpSession[]>();
      for (const candidate of this.#sessions.values())
        byTenant.set(candidate.tenant, [...(byTenant.get(candidate.tenant) ?? []), candidate]);
      const largest = [...byTenant.values()].sort((a, b) => b.length - a.length);
      let made = false;
      for (const sessions of largest) {
        made = await this.#endLeastRecentIdle(sessions);
        if (made) break;
      }
      if (!made) return false;
    }
    this.#sessions.set(session.id, session);
    return true;
  }

  #ofTenant(tenant: string): McpSession[] {
    return [...this.#sessions.values()].filter((candidate) => candidate.tenant === tenant);
  }

  async #endLeastRecentIdle(sessions: McpSession[]): Promise<boolean> {
    const idle = sessions.filter((candidate) => candidate.open === 0).sort((a, b) => a.lastSeen - b.lastSeen)[0];
    if (idle === undefined) return false;
    await this.end(idle);
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
