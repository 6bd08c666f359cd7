import type { FastifyInstance, FastifyReply, HTTPMethods } from "fastify";
import secureJson from "secure-json-parse";
import {
  InvalidApiKeyError,
  InvalidRequestError,
  MethodNotAllowedError,
  ServerShuttingDownError,
  UnknownUrlError,
} from "../errors/catalogue.js";
import type { ServeError } from "../errors/serve-error.js";
import type { GraphRegistry } from "../registry/graph-registry.js";
import type { TracingCallback } from "../tracing/tracing-callback.js";
import { jsonErrorPosition } from "../util/json-error-position.js";
import type { Authenticator, Caller } from "./auth.js";
import type { BackgroundRuns } from "./background/background-runs.js";
import { errorBody, toServeError } from "./error-mapper.js";
import type { RunLimits } from "./limits.js";
import type { McpSettings } from "./mcp/mcp-route.js";
import type { ApiLabel, ServerMetrics } from "./metrics.js";
import { resolveRequestId } from "./request-id.js";
import { type ClientProfile, registerChatRoute } from "./routes/chat-completions.js";
import { registerConversationRoutes } from "./routes/conversations.js";
import { type ReadinessCheck, registerHealthRoutes } from "./routes/health.js";
import { registerModelRoutes } from "./routes/models.js";
import { registerResponsesRoute } from "./routes/responses.js";
import type { CheckpointScope } from "./run-request.js";
import type { RunTracker } from "./run-tracker.js";

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
  checkpointScope?: CheckpointScope;
  tracing?: TracingCallback;
  runs: RunTracker;
  prefix: string;
  bodyLimit: number;
  keepAliveMs: number;
  /** Deadline of each readiness check. */
  backendTimeoutMs: number;
  docs: boolean;
  /** Browser origins allowed to call the API; absent: no CORS headers. */
  cors?: { origins: readonly string[] };
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
  /** Serve the playground page at `{prefix}/playground`. */
  playground: boolean;
  /** Serve the models as MCP tools at `{prefix}/mcp`, with each model's tool name. */
  mcp?: { settings: McpSettings; tools: ReadonlyMap<string, string> };
  /** Serve every model as an A2A agent under `{prefix}/a2a` (needs background runs); the version its cards give. */
  a2a?: { version: string };
  readinessChecks: readonly ReadinessCheck[];
  /** One log line per request at info (method, path, status, model, duration, request ID). */
  requestLog: boolean;
  /** Receives the encapsulated instance, exposed as `ChatServe.openaiApp`. */
  onInstance: (instance: FastifyInstance) => void;
}

/**
 * A request body as JSON, refusing `__proto__` and `constructor.prototype` keys as fastify
 * does. A syntax error names where, as a line and column.
 */
function parseJsonBody(text: string): unknown {
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

/**
 * What needs no API key: the probes (liveness, readiness), and the pages (playground, docs)
 * whose API calls need one.
 * Matched on the route's pattern, so a query string or an unknown path never passes.
 */
function publicRoutes(prefix: string): (route: string | undefined) => boolean {
  const exact = new Set(
    [
      "/health",
      "/ready",
      "/playground",
      "/playground/",
      "/playground/assets/*",
      "/playground/mermaid.min.js",
      "/openapi.json",
      // A2A discovery: a client reads a card to learn how to authenticate.
      "/a2a",
      "/a2a/:model/.well-known/agent-card.json",
    ].map((path) => prefix + path),
  );
  const pages = [`${prefix}/docs`, `${prefix}/redoc`];
  return (route) => route !== undefined && (exact.has(route) || pages.some((page) => route === page || route.startsWith(`${page}/`)));
}

/** The `api` label of a route: bounded, whatever URL a client asks for. */
function apiLabels(prefix: string): (route: string | undefined) => ApiLabel {
  const labels = new Map<string, ApiLabel>([
    [`${prefix}/chat/completions`, "chat.completions"],
    [`${prefix}/responses`, "responses"],
    [`${prefix}/mcp`, "mcp"],
    [`${prefix}/a2a/:model`, "a2a"],
    [`${prefix}/models`, "models"],
    [`${prefix}/models/*`, "models"],
    [`${prefix}/health`, "health"],
    [`${prefix}/ready`, "health"],
  ]);
  return (route) => (route === undefined ? "other" : (labels.get(route) ?? "other"));
}

/** Sends a ServeError in the OpenAI envelope, with the headers its condition calls for. */
export function sendServeError(reply: FastifyReply, serveError: ServeError): FastifyReply {
  if (serveError.retryAfterSeconds !== undefined) reply.header("retry-after", String(serveError.retryAfterSeconds));
  if (serveError instanceof MethodNotAllowedError) reply.header("allow", serveError.allow.join(", "));
  if (serveError instanceof InvalidApiKeyError) reply.header("www-authenticate", 'Bearer realm="chat-serve"');
  reply.request.chatServeFailure = serveError.code;
  return reply.status(serveError.status).send(errorBody(serveError));
}

// The methods a wrong-method request may use; OPTIONS is left to CORS preflight handlers.
const ANSWERED_METHODS: readonly HTTPMethods[] = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];

/** Answers every other method on a known path with 405 and an `Allow` header. */
function refuseOtherMethods(app: FastifyInstance, url: string, allowed: readonly HTTPMethods[]): void {
  const allow = allowed.includes("GET") ? [...allowed, "HEAD"] : [...allowed];
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
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_request, body, done) => {
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
  const apiOf = apiLabels(options.prefix);
  app.decorateRequest("chatServeStarted", 0);
  app.decorateRequest("chatServeFailure", undefined);
  // A draining server takes no new runs; what runs already may finish.
  const runRoutes = new Set([`${options.prefix}/chat/completions`, `${options.prefix}/responses`]);
  app.addHook("onRequest", async (request, reply) => {
    request.chatServeStarted = performance.now();
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
        metrics?.requestEnded(
          { model: typeof model === "string" && models.has(model) ? model : "", api: apiOf(request.routeOptions.url), status },
          durationMs / 1000,
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
      throw new ServerShuttingDownError();
    }
  });

  if (options.cors !== undefined) {
    // Registered before the key check: a preflight carries no key, and is answered here.
    await app.register((await import("@fastify/cors")).default, {
      origin: [...options.cors.origins],
      methods: ["GET", "HEAD", "POST", "DELETE"],
      exposedHeaders: [
        "x-request-id",
        "retry-after",
        "x-ratelimit-limit-requests",
        "x-ratelimit-remaining-requests",
        "x-ratelimit-reset-requests",
      ],
      maxAge: 600,
    });
  }
  const { authenticator } = options;
  if (authenticator !== undefined) {
    const isPublic = publicRoutes(options.prefix);
    // Before the body is read and before any graph code runs.
    app.addHook("onRequest", async (request) => {
      if (request.method === "OPTIONS" || isPublic(request.routeOptions.url)) return;
      request.chatServeCaller = await authenticator.identify(request);
    });
  }

  app.setErrorHandler((error, request, reply) => {
    const serveError = toServeError(error, { bodyLimit: options.bodyLimit, contentType: request.headers["content-type"] });
    metrics?.error(serveError.code);
    if (serveError instanceof ServerShuttingDownError) {
      // Expected while draining: the client is told to retry elsewhere; one line, no stack.
      request.log.info({ requestId: request.chatServeRequestId }, "refused a new request: the server is draining");
    } else if (serveError.status >= 500) {
      request.log.error({ err: error, requestId: request.chatServeRequestId }, "request failed");
    }
    return sendServeError(reply, serveError);
  });
  app.setNotFoundHandler((request, reply) => sendServeError(reply, new UnknownUrlError(request.method, request.url)));

  await options.limits?.register(app);
  // The docs plugins load only when docs are on.
  if (options.docs)
    await (await import("./docs.js")).registerDocs(
      app,
      options.prefix,
      options.registry.getGraphNames(),
      options.authenticator !== undefined,
    );
  if (options.playground)
    await (await import("./playground.js")).registerPlayground(app, {
      prefix: options.prefix,
      docs: options.docs,
      registry: options.registry,
    });
  const created = Math.floor(Date.now() / 1000);
  registerModelRoutes(app, options.registry, created);
  registerChatRoute(app, options);
  registerResponsesRoute(app, options);
  registerConversationRoutes(app, options);
  registerHealthRoutes(app, options.readinessChecks, options.backendTimeoutMs, options.isDraining);
  if (options.mcp !== undefined) {
    const { registerMcpRoute } = await import("./mcp/mcp-route.js");
    await registerMcpRoute(app, { ...options, mcp: options.mcp.settings, tools: options.mcp.tools });
    refuseOtherMethods(app, "/mcp", ["GET", "POST", "DELETE"]);
  }
  if (options.a2a !== undefined && options.background !== undefined) {
    const { registerA2aRoutes } = await import("./a2a/a2a-route.js");
    await registerA2aRoutes(app, {
      ...options,
      background: options.background,
      auth: options.authenticator !== undefined,
      version: options.a2a.version,
    });
    refuseOtherMethods(app, "/a2a", ["GET"]);
    refuseOtherMethods(app, "/a2a/:model", ["POST"]);
    refuseOtherMethods(app, "/a2a/:model/.well-known/agent-card.json", ["GET"]);
  }
  refuseOtherMethods(app, "/models", ["GET"]);
  refuseOtherMethods(app, "/models/*", ["GET"]);
  refuseOtherMethods(app, "/chat/completions", ["POST"]);
  refuseOtherMethods(app, "/responses", ["POST"]);
  refuseOtherMethods(app, "/responses/:id", ["GET", "DELETE"]);
  refuseOtherMethods(app, "/responses/:id/input_items", ["GET"]);
  refuseOtherMethods(app, "/responses/:id/cancel", ["POST"]);
  refuseOtherMethods(app, "/conversations", ["POST"]);
  refuseOtherMethods(app, "/conversations/:id", ["GET", "POST", "DELETE"]);
  refuseOtherMethods(app, "/conversations/:id/items", ["GET", "POST"]);
  refuseOtherMethods(app, "/conversations/:id/items/:item_id", ["GET", "DELETE"]);
  refuseOtherMethods(app, "/health", ["GET"]);
  refuseOtherMethods(app, "/ready", ["GET"]);
}
