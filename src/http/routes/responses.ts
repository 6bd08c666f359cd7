import type { FastifyInstance, FastifyReply } from "fastify";
import { parseResponsesRequest } from "../../dialects/responses/parse-responses-request.js";
import { responseId } from "../../dialects/responses/response-id.js";
import { ResponseRenderer } from "../../dialects/responses/response-renderer.js";
import type { PreparedRun } from "../../runs/prepare-run.js";
import { prepareRun } from "../../runs/prepare-run.js";
import { streamRun } from "../../runs/stream-run.js";
import type { ResponseStreamEvent } from "../../wire/responses-response.js";
import { errorBody, toServeError } from "../error-mapper.js";
import { writeSse } from "../sse-writer.js";
import type { ChatRouteOptions } from "./chat-completions.js";

/** A client that went away mid-run gets no answer; the run was aborted through its signal. */
function clientGone(reply: FastifyReply): boolean {
  return reply.raw.destroyed || reply.raw.socket?.destroyed === true;
}

/**
 * `POST /responses`: the Responses API over the same run engine as chat completions. The
 * request becomes the engine's request, the run's events are rendered as Responses events;
 * a complete response is those events collected.
 */
export function registerResponsesRoute(app: FastifyInstance, options: ChatRouteOptions): void {
  app.post(
    "/responses",
    { bodyLimit: options.bodyLimit, schema: { summary: "Run a graph as a response (the Responses API)", tags: ["responses"] } },
    async (request, reply) => {
      const parsed = parseResponsesRequest(request.body);
      const controller = options.runs.start();
      const onClose = () => {
        if (!reply.raw.writableFinished) controller.abort(new Error("the client disconnected"));
      };
      reply.raw.on("close", onClose);
      const { checkpointScope } = options;
      let run: PreparedRun | undefined;
      try {
        run = await prepareRun(options.registry, parsed.request, {
          requestId: request.chatServeRequestId,
          signal: controller.signal,
          log: request.log,
          tracing: options.tracing,
          backendTimeoutMs: options.backendTimeoutMs,
          scope: checkpointScope === undefined ? undefined : async () => checkpointScope(request),
          ...(parsed.resume === undefined ? {} : { resumeOf: parsed.resume }),
        });
        const renderer = new ResponseRenderer(responseId(run.interrupt?.runId), parsed.body, run.clientEvents, parsed.body.stream === true);
        if (parsed.body.stream !== true) {
          for await (const event of streamRun(run)) renderer.render(event);
          return renderer.response;
        }
        const preparedRun = run;
        async function* events(): AsyncGenerator<ResponseStreamEvent> {
          yield* renderer.start();
          try {
            for await (const event of streamRun(preparedRun)) yield* renderer.render(event);
          } catch (error) {
            const serveError = toServeError(error);
            if (serveError.status >= 500 && !clientGone(reply)) {
              request.log.error({ err: error }, "the stream failed after it had begun");
            }
            yield* renderer.fail(serveError);
          }
        }
        await writeSse(reply, events(), {
          keepAliveMs: options.keepAliveMs,
          typedEvents: true,
          errorFrame: (error) => errorBody(toServeError(error)),
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
