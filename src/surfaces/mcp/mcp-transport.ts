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
import type { McpSharedSessions } from "./mcp-shared.js";

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

const FULL = "This server holds as many MCP sessions as it keeps, all in use; retry shortly.";

/**
 * A session's server and transport in this process, opened by `initialize` (a new session, or
 * the one another process opened, replayed with its id): undefined when it did not open, with
 * `full` when this process holds as many sessions as it keeps.
 */
async function openSession(
  context: McpServerContext,
  sessions: McpSessions,
  who: { owner: string; tenant: string },
  initialize: { request: Request; body: unknown; authInfo: AuthInfo; id?: string },
): Promise<{ session: McpSession | undefined; full: boolean; response: Response }> {
  const server = createMcpServer(context);
  let session: McpSession | undefined;
  let full = false;
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: () => initialize.id ?? randomUUID(),
    onsessioninitialized: async (id) => {
      const opened: McpSession = { id, ...who, server, transport, lastSeen: Date.now(), open: 0 };
      if (await sessions.add(opened)) session = opened;
      else full = true;
    },
  });
  transport.onclose = () => sessions.forget(transport.sessionId);
  await server.connect(transport);
  const response = await transport.handleRequest(initialize.request, { parsedBody: initialize.body, authInfo: initialize.authInfo });
  if (session === undefined) await closeQuietly(server);
  return { session, full, response };
}

/** A session of `owner` another process opened, opened here too (its initialize replayed); undefined when it is not there, or another caller's. */
async function sharedSession(
  context: McpServerContext,
  sessions: McpSessions,
  shared: McpSharedSessions,
  id: string,
  owner: string,
  authInfo: AuthInfo,
): Promise<McpSession | "full" | undefined> {
  const record = await shared.find(id);
  // Another caller's session is one that does not exist, for this caller: nothing of it opens here.
  if (record === undefined || record.owner !== owner) return undefined;
  const request = new Request("http://localhost/mcp", {
    method: "POST",
    headers: { accept: "application/json, text/event-stream", "content-type": "application/json" },
  });
  const opened = await openSession(context, sessions, record, { request, body: record.initialize, authInfo, id });
  // The replayed initialize's answer was given long ago, by the process that opened the session.
  await opened.response.text().catch(() => "");
  return opened.full ? "full" : opened.session;
}

/**
 * With sessions: an initialize opens one; every other request names its own, or is refused.
 * On a deployment that shares them (`shared`), a session opened on another process is opened
 * here too, answers to questions go to the process that asked, and a DELETE ends it everywhere.
 */
async function sessionRequest(
  context: McpServerContext,
  sessions: McpSessions,
  shared: McpSharedSessions | undefined,
  request: FastifyRequest,
  reply: FastifyReply,
  body: unknown,
  authInfo: AuthInfo,
) {
  const header = request.headers["mcp-session-id"];
  const owner = ownerOf(request.chatServeCaller);
  if (typeof header === "string") {
    let session: McpSession | "full" | undefined = sessions.get(header);
    if (session === undefined && shared !== undefined) session = await sharedSession(context, sessions, shared, header, owner, authInfo);
    if (session === "full") return rpcError(reply, 503, -32000, FULL);
    // Another caller's session is one that does not exist, for this caller.
    if (session === undefined || session.owner !== owner) {
      return rpcError(reply, 404, -32001, "Session not found: it ended or expired. Initialize a new one.");
    }
    const done = sessions.use(session);
    reply.raw.once("close", done);
    if (shared !== undefined) {
      shared.touch(header);
      if (request.method === "POST") await shared.received(header, body);
    }
    const response = await session.transport.handleRequest(webRequest(request), { parsedBody: body, authInfo });
    if (request.method === "DELETE" && response.ok) await shared?.ended(header);
    return sendResponse(reply, response);
  }
  if (request.method !== "POST" || !messages(body).some(isInitializeRequest)) {
    return rpcError(reply, 400, -32000, "Bad Request: send the Mcp-Session-Id header the initialize response gave (or initialize first).");
  }
  const who = { owner, tenant: request.chatServeCaller?.tenant ?? "" };
  const { session, full, response } = await openSession(context, sessions, who, { request: webRequest(request), body, authInfo });
  if (session === undefined) {
    if (full) return rpcError(reply, 503, -32000, FULL);
    return sendResponse(reply, response);
  }
  if (shared !== undefined) {
    try {
      await shared.record(session, messages(body).find(isInitializeRequest));
    } catch (error) {
      await sessions.end(session);
      throw error;
    }
  }
  reply.raw.once("close", sessions.use(session));
  return sendResponse(reply, response);
}

async function closeQuietly(server: Server): Promise<void> {
  await server.close().catch(() => {});
}

/** What the route calls once the SDK is loaded. */
export const mcpTransport = { invalidParams, statelessRequest, sessionRequest };
