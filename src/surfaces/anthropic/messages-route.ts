import type { FastifyReply, FastifyRequest } from "fastify";
import { anthropicErrorBody } from "../../dialects/anthropic/anthropic-error.js";
import { messageEvents, messageId, toMessage } from "../../dialects/anthropic/message-events.js";
import { parseCountTokensRequest, parseMessagesRequest, thinkingDisabled } from "../../dialects/anthropic/parse-messages-request.js";
import { countInputTokens } from "../../dialects/responses/input-tokens.js";
import { observedEvents, runForRequest, streamErrorBody } from "../../http/run-request.js";
import { writeSse } from "../../http/sse-writer.js";
import type { SurfaceContext } from "../../http/surface.js";
import { assertVisible } from "../../http/visibility.js";
import { collectRun, streamRun } from "../../runs/stream-run.js";
import { sessionThread } from "../../runs/threads/run-thread.js";

/**
 * `POST /messages`: one graph run as an Anthropic Message, complete or streamed. What is wrong
 * with the request is an `invalid_request_error` before any stream byte; a failure after the
 * stream began is an `error` event, then the stream ends.
 */
export async function answerMessages(request: FastifyRequest, reply: FastifyReply, context: SurfaceContext) {
  const body = parseMessagesRequest(request.body);
  return runForRequest(
    request,
    reply,
    context,
    body,
    async (run) => {
      const identity = {
        id: messageId(),
        model: body.model,
        hideThinking: thinkingDisabled(request.body),
        clientEvents: body.metadata.graph_stream_events === "v1",
      };
      if (body.stream !== true) {
        const { output, usage } = await collectRun(run);
        return toMessage(identity, output, usage);
      }
      const events = messageEvents(identity);
      const failure = (error: unknown) => anthropicErrorBody(streamErrorBody(request, reply, context, run, error));
      await writeSse(
        reply,
        observedEvents(request, context, run, streamRun(run)),
        { keepAliveMs: context.keepAliveMs, stalledClientMs: context.stalledClientMs, errorFrame: failure as never, typedEvents: true },
        { first: events.first, of: (event) => events.of(event), fail: (error) => events.fail(failure(error).error) },
      );
      return reply;
    },
    { thread: sessionThread(body) },
  );
}

/** `POST /messages/count_tokens`: the input tokens of a Messages request, counted without running the graph. */
export async function countMessageTokens(request: FastifyRequest, context: SurfaceContext) {
  const body = parseCountTokensRequest(request.body);
  assertVisible(context.registry, request.chatServeCaller, body.model);
  context.registry.getGraph(body.model); // an unknown model: its 404 (not_found_error)
  return { input_tokens: await countInputTokens(body) };
}
