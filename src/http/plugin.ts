import type { FastifyInstance } from "fastify";
import { UnknownUrlError } from "../errors/catalogue.js";
import type { GraphRegistry } from "../registry/graph-registry.js";
import type { TracingCallback } from "../tracing/tracing-callback.js";
import { errorBody, toServeError } from "./error-mapper.js";
import { resolveRequestId } from "./request-id.js";
import type { RunTracker } from "./run-tracker.js";
import { registerChatRoute, type CheckpointScope } from "./routes/chat-completions.js";
import { registerHealthRoutes, type ReadinessCheck } from "./routes/health.js";
import { registerModelRoutes } from "./routes/models.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The request ID echoed as `x-request-id`; set for every request of the mounted app. */
    chatServeRequestId: string;
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
  docs: boolean;
  readinessChecks: readonly ReadinessCheck[];
  /** Receives the encapsulated instance, exposed as `ChatServe.openaiApp`. */
  onInstance: (instance: FastifyInstance) => void;
}

/**
 * The mounted app. Registered with a prefix, its hooks, error handler and not-found
 * handler stay inside its own encapsulated context; the host app is left untouched.
 */
export async function chatServePlugin(app: FastifyInstance, options: ChatServePluginOptions): Promise<void> {
  options.onInstance(app);
  // The API speaks JSON only; without this, fastify's text parser would accept text/plain.
  app.removeContentTypeParser("text/plain");
  app.decorateRequest("chatServeRequestId", "");
  app.addHook("onRequest", async (request, reply) => {
    request.chatServeRequestId = resolveRequestId(request);
    request.log = request.log.child({ requestId: request.chatServeRequestId });
    reply.header("x-request-id", request.chatServeRequestId);
  });

  app.setErrorHandler((error, request, reply) => {
    const serveError = toServeError(error, { bodyLimit: options.bodyLimit, contentType: request.headers["content-type"] });
    if (serveError.status >= 500) {
      request.log.error({ err: error, requestId: request.chatServeRequestId }, "request failed");
    }
    return reply.status(serveError.status).send(errorBody(serveError));
  });
  app.setNotFoundHandler((request, reply) => {
    const serveError = new UnknownUrlError(request.method, request.url);
    return reply.status(serveError.status).send(errorBody(serveError));
  });

  // The docs plugins load only when docs are on.
  if (options.docs) await (await import("./docs.js")).registerDocs(app, options.prefix);
  const created = Math.floor(Date.now() / 1000);
  registerModelRoutes(app, options.registry, created);
  registerChatRoute(app, options);
  registerHealthRoutes(app, options.readinessChecks);
}
