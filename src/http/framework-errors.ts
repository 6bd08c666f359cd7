import { randomUUID } from "node:crypto";
import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { InvalidHttpRequestError } from "../errors/catalogue.js";
import type { ServeError } from "../errors/serve-error.js";
import { errorBody } from "./error-mapper.js";
import { resolveRequestId } from "./request-id.js";

type Render = (error: ServeError) => unknown;

/** The error shape of each mount, by its prefix, per HTTP server (every instance of one app shares it). */
const SHAPES = new WeakMap<object, { prefix: string; render: Render }[]>();

/** Answers errors no route saw under `prefix` in `render`'s shape (a mount whose surface has its own). */
export function registerErrorShape(server: object, prefix: string, render: Render): void {
  SHAPES.set(server, [...(SHAPES.get(server) ?? []), { prefix, render }]);
}

/** The shape of the mount a URL falls under: the longest prefix that holds it; the OpenAI envelope by default. */
export function renderOf(request: FastifyRequest): Render {
  return renderAt(request.server.server, request.url);
}

function renderAt(server: object | undefined, url: string): Render {
  const path = url.split("?")[0] ?? "";
  let best: { prefix: string; render: Render } | undefined;
  for (const shape of (server === undefined ? undefined : SHAPES.get(server)) ?? []) {
    const under = shape.prefix === "" || path === shape.prefix || path.startsWith(`${shape.prefix}/`);
    if (under && (best === undefined || shape.prefix.length > best.prefix.length)) best = shape;
  }
  return best?.render ?? errorBody;
}

/**
 * Fastify's `frameworkErrors`: a URL the router cannot decode (bad percent-encoding) or a
 * path parameter over the router's length limit. Answered in the shape of the mount the URL
 * falls under (the OpenAI envelope unless that mount has its own), with an `x-request-id`,
 * like every other error. Set on the app chat-serve creates; a host app can pass it to
 * `Fastify({ frameworkErrors })` for the same answers.
 */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const serveError =
    error.code === "FST_ERR_MAX_PARAM_LENGTH"
      ? new InvalidHttpRequestError(400, "The request URL has a path segment that is too long.")
      : new InvalidHttpRequestError(400, "The request URL is not valid: check its percent-encoding.");
  void reply.status(serveError.status).header("x-request-id", resolveRequestId(request)).send(renderOf(request)(serveError));
}

/**
 * An HTTP/1.1 request must name its host (RFC 9112); one without a `Host` header is answered
 * 400 in the OpenAI envelope, with an `x-request-id`, before any route runs. The app chat-serve
 * creates lets such requests through Node (`requireHostHeader: false`) to answer them here.
 */
export function missingHostHook(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  if (request.raw.httpVersion !== "1.1" || request.headers.host !== undefined) {
    done();
    return;
  }
  const serveError = new InvalidHttpRequestError(400, "An HTTP/1.1 request must send a Host header.");
  void reply.status(serveError.status).header("x-request-id", resolveRequestId(request)).send(errorBody(serveError));
}

/**
 * The HTTP server's `clientError`: headers over the size limit (431), a request that was not
 * received in time (408), or framing that is not HTTP (400). No request object exists yet,
 * so the answer is written to the socket directly, with a new `x-request-id`, in the shape of
 * the mount its request line names (the OpenAI envelope when it names none), and the
 * connection is closed. Set on the app chat-serve creates; a host app can pass it to
 * `Fastify({ clientErrorHandler })`.
 */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection, or one whose response has begun, has nothing left to answer.
  const busy = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
  if (error.code === "ECONNRESET" || socket.destroyed || !socket.writable || busy) {
    socket.destroy();
    return;
  }
  const serveError =
    error.code === "HPE_HEADER_OVERFLOW"
      ? new InvalidHttpRequestError(431, "The request headers are larger than the server accepts.")
      : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? new InvalidHttpRequestError(408, "The request was not received in time; send the whole request promptly.")
        : new InvalidHttpRequestError(400, "The request is not valid HTTP.");
  // The request line, when the parser got that far, says whose shape the answer takes.
  const requestLine = (error as { rawPacket?: Buffer }).rawPacket?.subarray(0, 2048).toString("latin1").split("\r\n", 1)[0] ?? "";
  const url = /^[A-Z]+ (\S+) HTTP\/1\.[01]$/u.exec(requestLine)?.[1] ?? "";
  const body = JSON.stringify(renderAt((socket as Socket & { server?: object }).server, url)(serveError));
  socket.end(
    `HTTP/1.1 ${serveError.status} ${STATUS_CODES[serveError.status] ?? "Error"}\r\n` +
      "content-type: application/json; charset=utf-8\r\n" +
      `content-length: ${Buffer.byteLength(body)}\r\n` +
      `x-request-id: ${randomUUID()}\r\n` +
      "connection: close\r\n\r\n" +
      body,
  );
}
