import type { FastifyReply, FastifyRequest } from "fastify";
import { parseUiRequest } from "../../dialects/ai-sdk/parse-ui-request.js";
import { uiChunks } from "../../dialects/ai-sdk/ui-chunks.js";
import { errorBody } from "../../http/error-mapper.js";
import { observedEvents, runForRequest, streamErrorBody } from "../../http/run-request.js";
import { writeSse } from "../../http/sse-writer.js";
import type { SurfaceContext } from "../../http/surface.js";
import { streamRun } from "../../runs/stream-run.js";

/**
 * `POST /ai-sdk/{model}`: the body `useChat` sends, run as a chat turn of the session its chat
 * id names, answered as the UI message stream. What is wrong with the request (an unknown
 * model, a body that is not useChat's) is a JSON error before any stream byte; a failure
 * after the stream began is an `error` chunk, then the stream ends.
 */
export async function answerUiRequest(
  request: FastifyRequest<{ Params: { model: string } }>,
  reply: FastifyReply,
  context: SurfaceContext,
): Promise<FastifyReply | undefined> {
  const { chatId, request: engineRequest, continues } = parseUiRequest(request.params.model, request.body);
  return runForRequest(
    request,
    reply,
    context,
    engineRequest,
    async (run) => {
      const chunks = uiChunks(engineRequest.model, continues);
      reply.header("x-vercel-ai-ui-message-stream", "v1");
      await writeSse(
        reply,
        observedEvents(request, context, run, streamRun(run)),
        {
          keepAliveMs: context.keepAliveMs,
          stalledClientMs: context.stalledClientMs,
          errorFrame: (error) => errorBody(streamErrorBody(request, reply, context, run, error)),
        },
        {
          first: chunks.first,
          of: (event) => chunks.of(event),
          fail: (error) => chunks.fail(error, streamErrorBody(request, reply, context, run, error).message),
        },
      );
      return reply;
    },
    { thread: { kind: "session", session: chatId } },
  );
}
