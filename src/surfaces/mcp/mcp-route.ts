import type { FastifyReply, FastifyRequest } from "fastify";
import secureJson from "secure-json-parse";
import { modelTool } from "../../dialects/mcp/tool-schemas.js";
import type { Caller } from "../../http/auth.js";
import { type CorsSettings, namesOrigin } from "../../http/cors.js";
import type { RunRouteOptions } from "../../http/run-request.js";
import type { CarriedBy } from "./mcp-call.js";
import type { McpServerContext } from "./mcp-server.js";
import { McpSessions } from "./mcp-sessions.js";
import { McpSharedSessions } from "./mcp-shared.js";

/** How the MCP route of a mount behaves. */
export interface McpSettings {
  /**
   * Keep a session per client (elicitation needs one: the answer must reach the process that
   * asked). False: every request stands alone, as several processes behind one address need.
   */
  sessions: boolean;
  /** The server listens on loopback: a Host header naming another host is refused (DNS rebinding). */
  loopbackOnly: boolean;
  /** How long a question asked by elicitation waits for its answer (default 10 minutes). */
  elicitationTimeoutMs?: number;
  /** A session with no open request for this long is closed (default 30 minutes). */
  sessionIdleMs?: number;
  /** Sessions one process keeps at most (default 1000). */
  maxSessions?: number;
  /** Sessions one tenant keeps at most in one process (default 100). */
  maxSessionsPerTenant?: number;
}

export interface McpRouteOptions extends RunRouteOptions {
  mcp: McpSettings;
  tools: ReadonlyMap<string, string>;
  cors?: CorsSettings;
  isDraining: () => boolean;
}

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** A JSON-RPC error answered over HTTP, the way the Streamable HTTP transport answers its own. */
export function rpcError(reply: FastifyReply, status: number, code: number, message: string): FastifyReply {
  return reply.status(status).type("application/json").send({ jsonrpc: "2.0", error: { code, message }, id: null });
}

function hostnameOf(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  try {
    return new URL(`http://${value}`).hostname;
  } catch {
    return undefined;
  }
}

/**
 * Why a request may not reach the MCP server (DNS rebinding, the transport's security
 * guidance): a page's Origin that is neither a loopback page nor named by `cors` (`"*"` is not enough), or
 * on a loopback server, a Host header naming another host.
 */
function forbidden(request: FastifyRequest, options: McpRouteOptions): string | undefined {
  const origin = request.headers.origin;
  if (origin !== undefined && !namesOrigin(options.cors, origin)) {
    const host = URL.canParse(origin) ? new URL(origin).hostname : undefined;
    if (host === undefined || !LOOPBACK_NAMES.has(host)) {
      return `Pages from ${origin} may not call this MCP server; add the origin to server.cors.origins to let them.`;
    }
  }
  if (options.mcp.loopbackOnly) {
    const host = hostnameOf(request.headers.host);
    if (host === undefined || !LOOPBACK_NAMES.has(host)) {
      return `This MCP server listens on loopback and answers only requests for localhost, not for ${request.headers.host ?? "no host"}.`;
    }
  }
  return undefined;
}

/** Who a session belongs to: the caller's tenant and models. */
export function ownerOf(caller: Caller | undefined): string {
  return caller === undefined ? "" : JSON.stringify([caller.tenant, caller.models === undefined ? null : [...caller.models].sort()]);
}

export function messages(body: unknown): unknown[] {
  return Array.isArray(body) ? body : [body];
}

/** The body starts something new (a session, a run), which a draining server refuses. */
function startsWork(body: unknown): boolean {
  return messages(body).some((message) => {
    const method = (message as { method?: unknown } | null)?.method;
    return method === "initialize" || method === "tools/call";
  });
}

/** The MCP route's answer to one request, and what ends its sessions when the server closes. */
export interface McpHandler {
  handle(request: FastifyRequest, reply: FastifyReply): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * `{prefix}/mcp`: the mount's models as MCP tools over the Streamable HTTP transport (POST,
 * GET and DELETE), behind the mount's auth, limits and drain. With sessions, each client's
 * session keeps its server (and its elicitations) in this process; without, each request
 * gets a server of its own. The surface registers the route and loads this module with the
 * first request (or once the server has answered its first).
 */
export function mcpHandler(options: McpRouteOptions): McpHandler {
  const context: McpServerContext = {
    options,
    // Each tool's definition (its settings' JSON Schema included) is made once, here.
    tools: new Map(
      [...options.tools].map(([name, model]) => [name, { model, tool: modelTool(name, model, options.registry.getGraph(model)) }]),
    ),
    elicitationTimeoutMs: options.mcp.elicitationTimeoutMs ?? 600_000,
  };
  const sessions = options.mcp.sessions
    ? new McpSessions(
        options.mcp.sessionIdleMs ?? 1_800_000,
        options.mcp.maxSessions ?? 1000,
        Math.min(options.mcp.maxSessionsPerTenant ?? 100, options.mcp.maxSessions ?? 1000),
      )
    : undefined;
  // On a deployment that shares sessions (Redis), any process answers any session.
  const directory = options.background?.sharedSessions;
  const shared =
    sessions === undefined || directory === undefined
      ? undefined
      : new McpSharedSessions(directory, sessions, options.mcp.sessionIdleMs ?? 1_800_000);
  // The MCP SDK loads with the first request: a server that no MCP client calls never loads it.
  let transport: Promise<typeof import("./mcp-transport.js")["mcpTransport"]> | undefined;
  const loadTransport = () => (transport ??= import("./mcp-transport.js").then((module) => module.mcpTransport));
  return {
    close: async () => {
      shared?.close();
      await sessions?.close();
    },
    handle: async (request, reply) => {
      const refused = forbidden(request, options);
      if (refused !== undefined) return rpcError(reply, 403, -32000, refused);
      let body: unknown;
      if (request.method === "POST") {
        try {
          body = secureJson.parse(String(request.body ?? ""), undefined, { protoAction: "error", constructorAction: "error" });
        } catch {
          return rpcError(reply, 400, -32700, "Parse error: the body is not valid JSON.");
        }
        if (options.isDraining() && startsWork(body)) {
          reply.header("retry-after", "1");
          return rpcError(
            reply,
            503,
            -32000,
            "The server is shutting down and takes no new calls; retry, and another instance will answer.",
          );
        }
      }
      const transport = await loadTransport();
      const invalid = transport.invalidParams(body);
      if (invalid !== undefined) {
        const id = (body as { id?: unknown }).id;
        return reply.type("application/json").send({
          jsonrpc: "2.0",
          id: typeof id === "string" || typeof id === "number" ? id : null,
          error: { code: -32602, message: invalid },
        });
      }
      const carrier: CarriedBy = { request, reply };
      const authInfo = { token: "", clientId: request.chatServeCaller?.tenant ?? "", scopes: [], extra: { carrier } };
      if (sessions === undefined) return transport.statelessRequest(context, reply, request, body, authInfo);
      return transport.sessionRequest(context, sessions, shared, request, reply, body, authInfo);
    },
  };
}
