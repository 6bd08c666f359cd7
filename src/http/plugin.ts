import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from "fastify";
import secureJson from "secure-json-parse";
import type { BackgroundRuns } from "../background/background-runs.js";
import {
  AuthRefusedError,
  InvalidApiKeyError,
  InvalidRequestError,
  MethodNotAllowedError,
  RequestTooLargeError,
  ServerShuttingDownError,
  UnknownUrlError,
} from "../errors/catalogue.js";
import type { ServeError } from "../errors/serve-error.js";
import { toServeError } from "../errors/to-serve-error.js";
import type { GraphRegistry } from "../registry/graph-registry.js";
import type { ThreadTtl } from "../runs/agent/thread-sweeper.js";
import type { RunTracker } from "../runs/run-tracker.js";
import type { TracingCallback } from "../tracing/tracing-callback.js";
import { jsonErrorPosition } from "../util/json-error-position.js";
import type { Authenticator, Caller } from "./auth.js";
import { type CorsSettings, registerCors } from "./cors.js";
import { drainRequest } from "./drain-request.js";
import { errorBody } from "./error-mapper.js";
import { registerErrorShape, renderOf } from "./framework-errors.js";
import { type ReadinessCheck, registerHealthRoutes } from "./health.js";
import type { RunLimits } from "./limits.js";
import { ANSWERED_METHODS, allowedMethods, MethodIndex } from "./method-index.js";
import type { ServerMetrics } from "./metrics.js";
import { resolveRequestId } from "./request-id.js";
import type { CheckpointScope, ClientProfile } from "./run-request.js";
import type { Surface } from "./surface.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The request ID echoed as `x-request-id`; set for every request of the mounted app. */
    chatServeRequestId: string;
    /** The authenticated caller, on a server with `auth`; undefined without it. */
    chatServeCaller: Caller | undefined;
    /** When the request arrived (`performance.now()`), for its duration and time to first token. */
    chatServeStarted: number;
    /** The error code the request failed with (an error answer, or a stream's error frame), for its log line. */
    chatServeFailure: string | undefined;
  }
}

export interface ChatServePluginOptions {
  registry: GraphRegistry;
  /** `/health` and `/ready` under the prefix (default true); a second mount leaves them to the first. */
  probes?: boolean;
  checkpointScope?: CheckpointScope;
  tracing?: TracingCallback;
  runs: RunTracker;
  prefix: string;
  bodyLimit: number;
  keepAliveMs: number;
  /** A client whose connection takes nothing for this long, with the answer waiting, is dropped and its run ended. */
  stalledClientMs: number;
  /** A WebSocket with nothing running and no message for this long is closed (the Responses WebSocket mode). */
  socketIdleMs: number;
  /** Deadline of each readiness check. */
  backendTimeoutMs: number;
  /** Browser origins allowed to call the API; absent: no CORS headers. */
  cors?: CorsSettings;
  /** The host app's own request IDs are ours (`genReqId`), logged as `requestId` already. */
  hostRequestIds: boolean;
  /** True once the server drains before it stops: `/ready` is 503 and runs are refused. */
  isDraining: () => boolean;
  /** The wire of this mount: `strict` (the default) or `chat-ui`. */
  profile: ClientProfile;
  /** In the `chat-ui` profile, answer a UI's task prompts without running the graph. */
  answerTasks: boolean;
  /** Prometheus metrics; absent: none are kept. */
  metrics?: ServerMetrics;
  /** Background responses, worked by this process's queue. */
  background?: BackgroundRuns;
  /** Why background responses are refused, when they are. */
  backgroundUnavailable?: string;
  /** Request rates and concurrent runs per tenant; absent: no limits. */
  limits?: RunLimits;
  /** API keys and tenants; absent: every caller is let in. */
  authenticator?: Authenticator;
  /** The Agent Protocol's thread time to live (`checkpointer.ttl`), swept by its surface. */
  threadTtl?: ThreadTtl;
  /** The ways in this mount serves, in the order they are registered (the docs first: they document what follows). */
  surfaces: readonly Surface[];
  readinessChecks: readonly ReadinessCheck[];
  /** One log line per request at info (method, path, status, model, duration, request ID). */
  requestLog: boolean;
  /** A graph's exception reaches Agent Protocol clients as its name and message (a loopback server without keys). */
  developmentErrors?: boolean;
  /** Receives the encapsulated instance, exposed as `ChatServe.openaiApp`. */
  onInstance: (instance: FastifyInstance) => void;
  /**
   * The host app's index of known paths, when chat-serve created the host app: a mount at the
   * root leaves its wrong methods to the host's not-found handler instead of 405 routes.
   */
  hostMethods?: MethodIndex;
}

/**
 * A request body as JSON, refusing `__proto__` and `constructor.prototype` keys as fastify
 * does. A syntax error names where, as a line and column.
 */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === "") throw new InvalidRequestError("The request body is empty; send a JSON object.");
  try {
    return secureJson.parse(text, undefined, { protoAction: "error", constructorAction: "error" });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (/prototype/u.test(message)) {
      throw new InvalidRequestError("The request body has a __proto__ or constructor.prototype key, which is refused.", { cause: error });
    }
    // V8 words it "Unexpected token '}', ...context... is not valid JSON" or "... in JSON at position N".
    const reason = (/^Unexpected token '.*?'/u.exec(message)?.[0] ?? message.split("\n")[0]!).replace(/ in JSON at position \d+.*$/u, "");
    const position = jsonErrorPosition(text);
    const before = text.slice(0, position);
    const where = ` (line ${before.split("\n").length}, column ${position - before.lastIndexOf("\n")})`;
    throw new InvalidRequestError(`The request body is not valid JSON: ${reason}${where}.`, { cause: error });
  }
}

/** The probes every mount serves: the shared server's own routes, described as a surface's are. */
const HEALTH: Pick<Surface, "methods" | "apiLabels" | "publicPaths"> = {
  methods: { "/health": ["GET"], "/ready": ["GET"] },
  apiLabels: { "/health": "health", "/ready": "health" },
  publicPaths: ["/health", "/ready"],
};

/**
 * What needs no API key: the paths the surfaces open (pages, probes, discovery documents).
 * Matched on the route's pattern, so a query string or an unknown path never passes.
 */
function publicRoutes(prefix: string, surfaces: readonly Pick<Surface, "publicPaths">[]): (route: string | undefined) => boolean {
  const paths = surfaces.flatMap((surface) => surface.publicPaths ?? []);
  const exact = new Set(paths.filter((path) => !path.endsWith("/**")).map((path) => prefix + path));
  const pages = paths.filter((path) => path.endsWith("/**")).map((path) => prefix + path.slice(0, -"/**".length));
  return (route) => route !== undefined && (exact.has(route) || pages.some((page) => route === page || route.startsWith(`${page}/`)));
}

/** The `api` label of a route, as its surface declared it: bounded, whatever URL a client asks for. */
function apiLabels(prefix: string, surfaces: readonly Pick<Surface, "apiLabels">[]): (route: string | undefined) => string {
  const labels = new Map(
    surfaces.flatMap((surface) => Object.entries(surface.apiLabels ?? {})).map(([path, label]) => [prefix + path, label]),
  );
  return (route) => (route === undefined ? "other" : (labels.get(route) ?? "other"));
}

/** Sends a ServeError in the OpenAI envelope (or the mount's own shape), with the headers its condition calls for. */
export function sendServeError(
  reply: FastifyReply,
  serveError: ServeError,
  render: (error: ServeError) => unknown = errorBody,
): FastifyReply {
  if (serveError.retryAfterSeconds !== undefined) reply.header("retry-after", String(serveError.retryAfterSeconds));
  if (serveError instanceof MethodNotAllowedError) reply.header("allow", serveError.allow.join(", "));
  if (serveError instanceof InvalidApiKeyError) reply.header("www-authenticate", 'Bearer realm="chat-serve"');
  if (serveError instanceof AuthRefusedError) {
    for (const [name, value] of Object.entries(serveError.headers)) reply.header(name, value);
  }
  reply.request.chatServeFailure = serveError.code;
  return reply.status(serveError.status).send(render(serveError));
}

/** What a request no route took gets: 405 with the path's methods when the path is known, else 404. */
async function unknownUrl(request: FastifyRequest, methods: MethodIndex | undefined): Promise<ServeError> {
  const refused = await methods?.refused(request.method, request.url);
  return refused === undefined
    ? new UnknownUrlError(request.method, request.url)
    : new MethodNotAllowedError(request.method, request.url.split("?")[0] ?? request.url, refused.allow);
}

/** Answers every other method on a known path with 405 and an `Allow` header, as routes (a root mount on a host app chat-serve did not create). */
function refuseOtherMethods(app: FastifyInstance, url: string, allowed: readonly HTTPMethods[]): void {
  const allow = allowedMethods(allowed);
  const method = ANSWERED_METHODS.filter((candidate) => !allow.includes(candidate));
  app.route({
    method,
    url,
    schema: { hide: true },
    // The body of a refused request is never read.
    onRequest: async (request) => {
      throw new MethodNotAllowedError(request.method, request.url.split("?")[0] ?? url, allow);
    },
    handler: async () => undefined,
  });
}

/**
 * The mounted app. Registered with a prefix, its hooks, error handler and not-found
 * handler stay inside its own encapsulated context; the host app is left untouched.
 */
export async function chatServePlugin(app: FastifyInstance, options: ChatServePluginOptions): Promise<void> {
  options.onInstance(app);
  // The API speaks JSON only; without this, fastify's text parser would accept text/plain.
  app.removeContentTypeParser("text/plain");
  // Fastify's own JSON parser drops the parse error; a client deserves to know where it went wrong.
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    // A request no route takes is answered 404 or 405 in its path's shape: its body is never read.
    if (request.is404) {
      done(null, undefined);
      return;
    }
    try {
      done(null, parseJsonBody(body as string));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  app.decorateRequest("chatServeRequestId", "");
  app.decorateRequest("chatServeCaller", undefined);
  // Only when something would be written: the abstract logger of an app without logging has no levels.
  const logRequests = options.requestLog && (app.log as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled?.("info") === true;
  const { metrics } = options;
  const models = new Set(options.registry.getGraphNames());
  const described = [...options.surfaces, HEALTH];
  const apiOf = apiLabels(options.prefix, described);
  // The label goes on the route, for the code that counts a run's events.
  app.addHook("onRoute", (route) => {
    const label = apiOf(route.url);
    if (label !== "other") route.config = { ...(route.config as object), api: label };
  });
  app.decorateRequest("chatServeStarted", 0);
  app.decorateRequest("chatServeFailure", undefined);
  // A draining server takes no new runs; what runs already may finish.
  const runRoutes = new Set(options.surfaces.flatMap((surface) => surface.runPaths ?? []).map((path) => options.prefix + path));
  // What the surfaces load on first use loads once the first request has been answered.
  const warmers = options.surfaces.flatMap((surface) => (surface.warm === undefined ? [] : [surface.warm]));
  let warmed = warmers.length === 0;
  const warm = () => setImmediate(() => warmers.forEach((load) => void load().catch(() => undefined)));
  // A callback hook, not an async one: it runs on every request, and never waits.
  app.addHook("onRequest", (request, reply, done) => {
    request.chatServeStarted = performance.now();
    if (!warmed) {
      warmed = true;
      reply.raw.once("close", warm);
    }
    if (options.hostRequestIds) {
      request.chatServeRequestId = request.id;
    } else {
      request.chatServeRequestId = resolveRequestId(request);
      request.log = request.log.child({ requestId: request.chatServeRequestId });
    }
    reply.header("x-request-id", request.chatServeRequestId);
    // On close, not onResponse: streamed replies are hijacked and skip the response hooks.
    if (logRequests || metrics !== undefined) {
      reply.raw.once("close", () => {
        const started = request.chatServeStarted;
        const model = (request.body as { model?: unknown } | undefined)?.model;
        const status = reply.raw.statusCode;
        const durationMs = performance.now() - started;
        const route = request.routeOptions.url;
        metrics?.requestEnded(
          { model: typeof model === "string" && models.has(model) ? model : "", api: request.routeOptions.config.api ?? "other", status },
          durationMs / 1000,
          request.method === "POST" && runRoutes.has(route ?? ""),
        );
        if (!logRequests) return;
        // The status alone says 200 for a stream the client left, or one that ended in an error frame.
        const errorCode = request.chatServeFailure;
        const outcome = !reply.raw.writableFinished ? "aborted" : errorCode !== undefined ? "failed" : "completed";
        request.log.info(
          {
            method: request.method,
            path: request.url,
            status,
            model: typeof model === "string" ? model : undefined,
            durationMs: Math.round(durationMs),
            outcome,
            ...(outcome === "failed" ? { errorCode } : {}),
          },
          `${request.method} ${request.url} ${status}${typeof model === "string" ? ` ${model}` : ""} ${Math.round(durationMs)}ms ${outcome}${outcome === "failed" ? ` ${errorCode}` : ""}`,
        );
      });
    }
    if (options.isDraining() && request.method === "POST" && runRoutes.has(request.routeOptions.url ?? "")) {
      done(new ServerShuttingDownError());
      return;
    }
    done();
  });

  // Registered before the key check: a preflight carries no key, and is answered here.
  if (options.cors !== undefined) await registerCors(app, options.cors);
  const { authenticator } = options;
  if (authenticator !== undefined) {
    const isPublic = publicRoutes(options.prefix, described);
    // Before the body is read and before any graph code runs.
    app.addHook("onRequest", async (request) => {
      if (request.method === "OPTIONS" || isPublic(request.routeOptions.url)) return;
      request.chatServeCaller = await authenticator.identify(request);
    });
  }

  // A mount answers errors in the OpenAI envelope, or in the shape of its surfaces when they all
  // have their own (the Agent Protocol's mount). A surface with a shape of its own in a mount of
  // another (the Anthropic Messages API under the API prefix) answers in it from a scope of its own.
  const shaped = options.surfaces.filter((surface) => surface.errorBody !== undefined);
  const render = shaped.length > 0 && shaped.length === options.surfaces.length ? shaped[0]!.errorBody! : errorBody;
  const shapeOf = (surface: { errorBody?: Surface["errorBody"] }) => surface.errorBody ?? render;
  // Also for what the router refuses before any route of this mount sees it (a bad URL).
  registerErrorShape(app.server, options.prefix, render);
  for (const surface of options.surfaces) {
    if (shapeOf(surface) === render) continue;
    for (const path of Object.keys(surface.methods ?? {})) registerErrorShape(app.server, options.prefix + path, shapeOf(surface));
  }
  const errorHandler = (shape: (error: ServeError) => unknown) => (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const serveError = toServeError(error, { bodyLimit: options.bodyLimit, contentType: request.headers["content-type"] });
    metrics?.error(serveError.code);
    if (serveError instanceof ServerShuttingDownError) {
      // Expected while draining: the client is told to retry elsewhere; one line, no stack.
      request.log.info({ requestId: request.chatServeRequestId }, "refused a new request: the server is draining");
    } else if (serveError.status >= 500) {
      request.log.error({ err: error, requestId: request.chatServeRequestId }, "request failed");
    }
    if (serveError instanceof RequestTooLargeError) {
      // The client is still sending: read the rest (bounded) so it reads the 413, not a reset.
      return drainRequest(request.raw).then((whole) =>
        sendServeError(whole ? reply : reply.header("connection", "close"), serveError, shape),
      );
    }
    return sendServeError(reply, serveError, shape);
  };
  app.setErrorHandler(errorHandler(render));
  // A wrong method on a known path is 405, answered where unknown URLs are: by this mount's
  // not-found handler under a prefix, by the host app's at the root (405 routes only on a host
  // app someone else created, registered with the surface's routes below).
  const methods = options.prefix !== "" ? new MethodIndex() : options.hostMethods;
  if (methods !== undefined) {
    for (const surface of options.probes === false ? options.surfaces : described) {
      if (surface.methods !== undefined) methods.add(options.prefix, surface.methods, "errorBody" in surface ? shapeOf(surface) : render);
    }
  } else if (options.probes !== false && HEALTH.methods !== undefined) {
    for (const [path, allowed] of Object.entries(HEALTH.methods)) refuseOtherMethods(app, path, allowed);
  }
  if (options.prefix !== "")
    // In the shape of the surface whose paths the URL falls under (`/v1/messages/…` is Anthropic's).
    app.setNotFoundHandler(async (request, reply) => sendServeError(reply, await unknownUrl(request, methods), renderOf(request)));

  await options.limits?.register(app);
  // Every surface on this instance: hooks, error handler and the content-type parsers above apply
  // to all; a surface with its own error shape gets a scope of its own that answers in it.
  for (const surface of options.surfaces) {
    const shape = shapeOf(surface);
    const registerSurface = async (scope: FastifyInstance) => {
      if (methods === undefined)
        for (const [path, allowed] of Object.entries(surface.methods ?? {})) refuseOtherMethods(scope, path, allowed);
      await surface.register(scope, options);
    };
    if (shape === render) await registerSurface(app);
    else
      await app.register(async (scope) => {
        scope.setErrorHandler(errorHandler(shape));
        await registerSurface(scope);
      });
  }
  if (options.probes !== false) registerHealthRoutes(app, options.readinessChecks, options.backendTimeoutMs, options.isDraining);
}
