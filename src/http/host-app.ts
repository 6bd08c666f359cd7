import { timingSafeEqual } from "node:crypto";
import Fastify, { type FastifyInstance, type FastifyServerOptions, LogController } from "fastify";
import { InvalidApiKeyError, MethodNotAllowedError, UnknownUrlError } from "../errors/catalogue.js";
import { toServeError } from "../errors/to-serve-error.js";
import { escapeHtml } from "../util/escape-html.js";
import { bearerToken, secretDigest } from "./auth.js";
import { clientErrorHandler, frameworkErrorHandler, missingHostHook, renderOf } from "./framework-errors.js";
import type { MethodIndex } from "./method-index.js";
import type { MetricsSettings } from "./metrics.js";
import { sendServeError } from "./plugin.js";
import { requestIdOf, resolveRequestId } from "./request-id.js";
import { lazySchemaController } from "./schema-compilers.js";
import type { SurfacePointer } from "./surface.js";

// The fastify app chat-serve creates when it is given none: its timeouts, its answers to
// framework and client errors, `GET /` and the pointers for a base URL without the prefix,
// and the metrics scrape.

/**
 * On an app chat-serve created: `GET /` says where the API is, and where each surface that
 * points itself out is (a page for a browser, JSON for anything else), and a request for an API
 * path without the prefix (a base URL missing `/v1`) is told the right URL.
 */
export function registerRootPointers(
  app: FastifyInstance,
  prefix: string,
  pointers: readonly SurfacePointer[],
  /** The surfaces' paths (`/chat/completions`, `/responses/:id`): a client may ask for one without the prefix. */
  apiPaths: readonly string[],
  /** The paths mounted at the root, for a 405 on a wrong method (see `hostMethods`). */
  methods: MethodIndex,
): void {
  // Each path up to its first parameter: `/responses/:id` is under `/responses`.
  const stems = [...new Set(apiPaths.map((path) => path.split(/\/[:*]/u)[0]!).filter((stem) => stem !== ""))];
  const isApiPath = (path: string) => stems.some((stem) => path === stem || path.startsWith(`${stem}/`));
  const api = { api: prefix || "/", models: `${prefix}/models` };
  const urls = pointers.map((pointer) => ({ ...pointer, url: `${prefix}${pointer.path}` }));
  const links = { ...api, ...Object.fromEntries(urls.map(({ label, url }) => [label, url])) };
  const sentences = urls
    .filter((pointer) => pointer.sentence !== undefined)
    .map((pointer) => ` ${pointer.sentence!.replaceAll("{url}", pointer.url)}`)
    .join("");
  const message = `chat-serve is running. The OpenAI-compatible API is under ${api.api}: list the models with GET ${api.models}.${sentences}`;
  const item = (pointer: (typeof urls)[number]) => `<li>${pointer.item.replaceAll("{url}", escapeHtml(pointer.url))}</li>\n`;
  const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>chat-serve</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; line-height: 1.5">
<h1>chat-serve is running</h1>
<ul>
${urls
  .filter((pointer) => pointer.first === true)
  .map(item)
  .join(
    "",
  )}<li>OpenAI-compatible API: base URL <code>${escapeHtml(api.api)}</code> (<a href="${escapeHtml(api.models)}">the models</a>)</li>
${urls
  .filter((pointer) => pointer.first !== true)
  .map(item)
  .join("")}</ul>
</body></html>`;
  app.get("/", async (request, reply) => {
    // A browser asks for HTML first; clients and curl get JSON.
    if (/^text\/html\b/u.test(request.headers.accept ?? "")) {
      return reply.type("text/html; charset=utf-8").send(page);
    }
    return { object: "chat-serve", message, ...links };
  });
  // What fails before a root route answers (the body of a request to an unknown path that is not
  // JSON): the mount's shape, an x-request-id, never the framework's own body.
  app.setErrorHandler((error, request, reply) => {
    const serveError = toServeError(error, { contentType: request.headers["content-type"] });
    if (serveError.status >= 500) request.log.error({ err: error }, "request failed");
    return sendServeError(reply.header("x-request-id", resolveRequestId(request)), serveError, renderOf(request));
  });
  app.setNotFoundHandler(async (request, reply) => {
    const path = request.url.split("?")[0] ?? "/";
    const refused = await methods.refused(request.method, request.url);
    if (refused !== undefined) {
      const error = new MethodNotAllowedError(request.method, path, refused.allow);
      return sendServeError(reply.header("x-request-id", request.id), error, refused.render);
    }
    const hint = isApiPath(path)
      ? `Did you mean ${prefix}${path}? Point the client's base URL at ${prefix} (for example http://host:port${prefix}).`
      : `The API is under ${prefix || "/"}.`;
    return sendServeError(reply.header("x-request-id", request.id), new UnknownUrlError(request.method, request.url, hint));
  });
}

/**
 * `GET {path}` on the host app: the Prometheus scrape, behind a bearer token when one is set
 * (compared in constant time).
 */
export function registerScrapeRoute(
  app: FastifyInstance,
  metrics: { scrape(): Promise<{ contentType: string; body: string }> },
  settings: MetricsSettings,
): void {
  const token = settings.token === undefined ? undefined : secretDigest(settings.token);
  app.get(settings.path ?? "/metrics", { schema: { hide: true } }, async (request, reply) => {
    if (token !== undefined) {
      const sent = bearerToken(request);
      if (sent === undefined || !timingSafeEqual(secretDigest(sent), token)) {
        return sendServeError(
          reply.header("x-request-id", resolveRequestId(request)),
          new InvalidApiKeyError("The metrics need the scrape token: send it as 'Authorization: Bearer TOKEN'."),
        );
      }
    }
    const { contentType, body } = await metrics.scrape();
    return reply.type(contentType).send(body);
  });
}

/** How long a client may take to send a request; a response, however long it streams, is never cut. */
export interface HttpTimeouts {
  /** Until the request headers are in (default 20 s). */
  headersTimeoutMs?: number;
  /** Until the whole request, body included, is in (default 60 s). */
  requestTimeoutMs?: number;
  /** How long an idle keep-alive connection stays open between requests (default 72 s). */
  keepAliveTimeoutMs?: number;
}

const DEFAULT_HTTP_TIMEOUTS: Required<HttpTimeouts> = {
  headersTimeoutMs: 20_000,
  requestTimeoutMs: 60_000,
  keepAliveTimeoutMs: 72_000,
};

/**
 * A fastify app for chat-serve to own: its request, header and idle timeouts, and framework
 * and client errors (bad URLs, oversized headers, broken framing) answered in the OpenAI
 * envelope with an `x-request-id`. Access logs belong to the deployment's web server or proxy.
 */
export function createHostApp(logger: FastifyServerOptions["logger"], timeouts: HttpTimeouts | undefined): FastifyInstance {
  const { headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs } = { ...DEFAULT_HTTP_TIMEOUTS, ...timeouts };
  const app = Fastify({
    logger: logger ?? false,
    // Fastify's JSON-schema compilers load only if a route has a schema to compile.
    schemaController: lazySchemaController,
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: "requestId" }),
    requestTimeout: requestTimeoutMs,
    keepAliveTimeout: keepAliveTimeoutMs,
    // close() ends every connection: a graceful stop drains first (drain(), runsSettled()), and a
    // connection a client opened but never used must not hold close() until its headers time out.
    forceCloseConnections: true,
    // Node checks those deadlines on this interval (30 s by default, too coarse for them).
    // Node answers an HTTP/1.1 request without a Host header with a bare 400 of its own; it
    // reaches the app instead, which answers it in the envelope (missingHostHook).
    http: {
      headersTimeout: Math.min(headersTimeoutMs, requestTimeoutMs),
      connectionsCheckingInterval: 1_000,
      requireHostHeader: false,
    },
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
    // Fastify's own request ID (and its logger's label) is ours: no second child logger per request.
    genReqId: requestIdOf,
    // While closing, requests on open connections reach the routes, which answer in the
    // OpenAI envelope (503 server_shutting_down for new runs) rather than fastify's own 503.
    return503OnClosing: false,
  });
  app.addHook("onRequest", missingHostHook);
  return app;
}
