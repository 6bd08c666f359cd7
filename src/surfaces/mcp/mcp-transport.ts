import { randomUUID } from "node:crypto";
import { PassThrough, pipeline, Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { FastifyReply, FastifyRequest } from "fastify";
import { invalidParams } from "./mcp-params.js";
import { messages, ownerOf, rpcError } from "./mcp-route.js";
import { createMcpServer, type McpServerContext } from "./mcp-server.js";
import type { McpSession, McpSessions } from "./mcp-sessions.js";

// The part of the MCP route that needs the MCP SDK, loaded on the first request, so that a
// server starts without it (the first MCP request pays the SDK's import once).

/** The request as the SDK's web-standard transport reads it (the body is handed over parsed). */
function webRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  return new Request(new URL(request.url, "http://localhost"), { method: request.method, headers });
}

/** Sends the transport's answer through fastify: its status, headers and (streamed) body. */
function sendResponse(reply: FastifyReply, response: Response): FastifyReply {
  reply.status(response.status);
  response.headers.forEach((value, name) => {
    reply.header(name, value);
  });
  if (response.body === null) return reply.send();
  const body = Readable.fromWeb(response.body as WebReadableStream);
  if (response.headers.get("content-type")?.startsWith("text/event-stream") !== true) return reply.send(body);
  // An event stream opens with a comment, so its headers leave at once rather than with its
  // first event. A client that leaves destroys the stream sent, and the pipeline the body.
  const events = new PassThrough();
  events.write(": stream open\n\n");
  pipeline(body, events, () => {});
  return reply.send(events);
}

export type AuthInfo = { token: string; clientId: string; scopes: string[]; extra: Record<string, unknown> };

/** Without sessions: a server and transport for this request alone, closed when it ends. */
async function statelessRequest(
  context: McpServerContext,
  reply: FastifyReply,
  request: FastifyRequest,
  body: unknown,
  authInfo: AuthInfo,
) {
  if (request.method !== "POST") {
    reply.header("allow", "POST");
    return rpcError(reply, 405, -32000, "This server keeps no sessions: only POST is answered (no GET stream, nothing to DELETE).");
  }
  const server = createMcpServer(context);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  await server.connect(transport);
  reply.raw.once("close", () => void server.close().catch(() => {}));
  return sendResponse(reply, await transport.handleRequest(webRequest(request), { parsedBody: body, authInfo }));
}

/** With sessions: an initialize opens one; every other request names its own, or is refused. */
async function sessionRequest(
  context: McpServerContext,
  sessions: McpSessions,
  request: FastifyRequest,
  reply: FastifyReply,
  body: unknown,
  authInfo: AuthInfo,
) {
  const header = request.headers["mcp-session-id"];
  const owner = ownerOf(request.chatServeCaller);
  if (typeof header === "string") {
    const session = sessions.get(header);
    // Another caller's session is one that does not exist, for this caller.
    if (session === undefined || session.owner !== owner) {
      return rpcError(reply, 404, -32001, "Session not found: it ended or expired. Initialize a new one.");
    }
    const done = sessions.use(session);
    reply.raw.once("close", done);
    return sendResponse(reply, await session.transport.handleRequest(webRequest(request), { parsedBody: body, authInfo }));
  }
  if (request.method !== "POST" || !messages(body).some(isInitializeRequest)) {
    return rpcError(reply, 400, -32000, "Bad Request: send the Mcp-Session-Id header the initialize response gave (or initialize first).");
  }
  const server = createMcpServer(context);
  let opened: McpSession | undefined;
  let full = false;
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: async (id) => {
      const tenant = request.chatServeCaller?.tenant ?? "";
      const session: McpSession = { id, owner, tenant, server, transport, lastSeen: Date.now(), open: 0 };
      if (await sessions.add(session)) opened = session;
      else full = true;
    },
  });
  transport.onclose = () => sessions.forget(transport.sessionId);
  await server.connect(transport);
  const response = await transport.handleRequest(webRequest(request), { parsedBody: body, authInfo });
  if (opened === undefined) {
    await closeQuietly(server);
    if (full) return rpcError(reply, 503, -32000, "This server holds as many MCP sessions as it keeps, all in use; retry shortly.");
  } else {
    reply.raw.once("close", sessions.use(opened));
  }
  return sendResponse(reply, response);
}

async function closeQuietly(server: Server): Promise<void> {
  await server.close().catch(() => {});
}

/** What the route calls once the SDK is loaded. */
export const mcpTransport = { invalidParams, statelessRequest, sessionRequest };
