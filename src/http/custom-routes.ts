import { Readable } from "node:stream";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Authenticator } from "./auth.js";

/** A project's own routes (`langgraph.json`'s `http.app`): a Hono app, or anything with a Fetch API `fetch`. */
export interface CustomRoutes {
  fetch(request: Request): Response | Promise<Response>;
  /** `enable_custom_route_auth`: the project's routes are behind the server's auth too. */
  auth?: boolean;
  /** Served under this prefix (`mount_prefix`), which the handler does not see: `/api/hello` reaches its `/hello`. */
  prefix?: string;
}

/** True for what can serve as custom routes: an object (a Hono app) or a function with `fetch`. */
export function isFetchHandler(value: unknown): value is { fetch(request: Request): Response | Promise<Response> } {
  return (
    (typeof value === "object" || typeof value === "function") &&
    value !== null &&
    typeof (value as { fetch?: unknown }).fetch === "function"
  );
}

/**
 * A request as the Fetch API's `Request` (what an `Auth`'s `authenticate` and a Hono app take):
 * its method, URL and headers, and `body` (the bytes the client sent) when given.
 */
export function toFetchRequest(request: FastifyRequest, body?: Buffer, prefix = ""): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else if (value !== undefined) headers.set(name, String(value));
  }
  const url = new URL(request.url.slice(prefix.length) || "/", `${request.protocol}://${request.headers.host ?? "localhost"}`);
  return new Request(url, { method: request.method, headers, ...(body === undefined || body.length === 0 ? {} : { body }) });
}

/**
 * Serves a project's own routes beside chat-serve's, at the server root or under `prefix`: a request no route of
 * chat-serve's takes goes to the project's `fetch`, and what it does not answer either (404)
 * gets chat-serve's own "not found". chat-serve's routes come first, so a project's route
 * never shadows the protocol's (LangGraph's server lets one replace a built-in route). Behind
 * the server's auth only when `auth` says so, as `enable_custom_route_auth` does.
 */
export function registerCustomRoutes(
  app: FastifyInstance,
  routes: CustomRoutes,
  authenticator: Authenticator | undefined,
  /** CORS is on: its preflights (OPTIONS) are the server's to answer, never the project's. */
  cors = false,
): void {
  void app.register(async (scope) => {
    // The project's routes read their bodies themselves: every body reaches them as its bytes.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", { parseAs: "buffer" }, (_request, body, done) => done(null, body));
    if (routes.auth === true && authenticator !== undefined) {
      scope.addHook("onRequest", async (request) => {
        request.chatServeCaller = await authenticator.identify(request);
      });
    }
    const handler = async (request: FastifyRequest, reply: FastifyReply) => {
      const response = await routes.fetch(
        toFetchRequest(request, request.body instanceof Buffer ? request.body : undefined, routes.prefix),
      );
      if (response.status === 404) {
        await response.body?.cancel();
        return reply.callNotFound();
      }
      reply.status(response.status);
      response.headers.forEach((value, name) => {
        if (name !== "content-length" && name !== "transfer-encoding") reply.header(name, value);
      });
      return reply.send(response.body === null ? null : Readable.fromWeb(response.body as import("node:stream/web").ReadableStream));
    };
    const methods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", ...(cors ? [] : ["OPTIONS"])];
    for (const url of routes.prefix === undefined ? ["/*"] : [routes.prefix, `${routes.prefix}/*`])
      scope.route({ method: methods, url, handler });
  });
}
