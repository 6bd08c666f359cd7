import { randomUUID } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { toChatCompletion } from "../../dialects/chat/completion.js";
import { toCompletionChunks } from "../../dialects/chat/completion-chunks.js";
import { parseChatRequest } from "../../dialects/chat/parse-chat-request.js";
import type { GraphRegistry } from "../../registry/graph-registry.js";
import type { PreparedRun } from "../../runs/prepare-run.js";
import { prepareRun } from "../../runs/prepare-run.js";
import { collectRun, streamRun } from "../../runs/stream-run.js";
import type { TracingCallback } from "../../tracing/tracing-callback.js";
import { errorBody, toServeError } from "../error-mapper.js";
import type { RunTracker } from "../run-tracker.js";
import { writeSse } from "../sse-writer.js";

/**
 * The server-trusted isolation scope of interrupt checkpoints, from an authenticated tenant
 * or principal: never from request metadata or `user`. Sync or async; a non-empty string.
 */
export type CheckpointScope = (request: FastifyRequest) => string | Promise<string>;

export interface ChatRouteOptions {
  registry: GraphRegistry;
  checkpointScope?: CheckpointScope;
  tracing?: TracingCallback;
  runs: RunTracker;
  bodyLimit: number;
  keepAliveMs: number;
  backendTimeoutMs: number;
}

function completionId(): string {
  return `chatcmpl-${randomUUID().replaceAll("-", "")}`;
}

/** A client that went away mid-run gets no answer; the run was aborted through its signal. */
function clientGone(reply: FastifyReply): boolean {
  return reply.raw.destroyed || reply.raw.socket?.destroyed === true;
}

/** `POST /chat/completions`: complete or streamed. */
export function registerChatRoute(app: FastifyInstance, options: ChatRouteOptions): void {
  app.post(
    "/chat/completions",
    { bodyLimit: options.bodyLimit, schema: { summary: "Run a graph as a chat completion", tags: ["chat"] } },
    async (request, reply) => {
      const body = parseChatRequest(request.body);
      const controller = options.runs.start();
      const onClose = () => {
        if (!reply.raw.writableFinished) controller.abort(new Error("the client disconnected"));
      };
      reply.raw.on("close", onClose);
      const { checkpointScope } = options;
      let run: PreparedRun | undefined;
      try {
        run = await prepareRun(options.registry, body, {
          requestId: request.chatServeRequestId,
          signal: controller.signal,
          log: request.log,
          tracing: options.tracing,
          backendTimeoutMs: options.backendTimeoutMs,
          scope: checkpointScope === undefined ? undefined : async () => checkpointScope(request),
        });
        const identity = { id: completionId(), created: Math.floor(Date.now() / 1000), model: body.model };
        if (body.stream !== true) {
          const { output, usage } = await collectRun(run);
          return toChatCompletion(identity, output, usage);
        }
        const includeUsage = body.stream_options?.include_usage === true;
        await writeSse(reply, toCompletionChunks(streamRun(run), identity, includeUsage), {
          keepAliveMs: options.keepAliveMs,
          errorFrame: (error) => {
            const serveError = toServeError(error);
            // A client that left caused the failure itself; there is nothing to report.
            if (serveError.status >= 500 && !clientGone(reply)) {
              request.log.error({ err: error }, "the stream failed after it had begun");
            }
            return errorBody(serveError);
          },
        });
        return reply;
      } catch (error) {
        if (controller.signal.aborted && clientGone(reply)) {
          request.log.info("the client disconnected; the run was aborted");
          reply.hijack();
          return reply;
        }
        throw error;
      } finally {
        reply.raw.off("close", onClose);
        await run?.release();
        options.runs.finish(controller);
      }
    },
  );
}
