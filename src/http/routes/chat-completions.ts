import { randomUUID } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { toChatCompletion } from "../../dialects/chat/completion.js";
import { toCompletionChunks } from "../../dialects/chat/completion-chunks.js";
import { parseChatRequest } from "../../dialects/chat/parse-chat-request.js";
import { collectRun, streamRun } from "../../runs/stream-run.js";
import { errorBody } from "../error-mapper.js";
import { observedEvents, type RunRouteOptions, runForRequest, streamErrorBody } from "../run-request.js";
import { writeSse } from "../sse-writer.js";

function completionId(): string {
  return `chatcmpl-${randomUUID().replaceAll("-", "")}`;
}

/** `POST /chat/completions`: complete or streamed. */
export function registerChatRoute(app: FastifyInstance, options: RunRouteOptions): void {
  app.post(
    "/chat/completions",
    { bodyLimit: options.bodyLimit, schema: { summary: "Run a graph as a chat completion", tags: ["chat"] } },
    async (request, reply) => {
      const body = parseChatRequest(request.body);
      return runForRequest(request, reply, options, body, async (run) => {
        const identity = { id: completionId(), created: Math.floor(Date.now() / 1000), model: body.model };
        if (body.stream !== true) {
          const { output, usage } = await collectRun(run);
          return toChatCompletion(identity, output, usage);
        }
        const includeUsage = body.stream_options?.include_usage === true;
        await writeSse(reply, toCompletionChunks(observedEvents(request, options, run, streamRun(run)), identity, includeUsage), {
          keepAliveMs: options.keepAliveMs,
          errorFrame: (error) => errorBody(streamErrorBody(request, reply, options, run, error)),
        });
        return reply;
      });
    },
  );
}
