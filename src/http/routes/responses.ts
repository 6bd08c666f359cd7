import type { FastifyInstance } from "fastify";
import { parseResponsesRequest } from "../../dialects/responses/parse-responses-request.js";
import { responseId } from "../../dialects/responses/response-id.js";
import { ResponseRenderer } from "../../dialects/responses/response-renderer.js";
import { streamRun } from "../../runs/stream-run.js";
import type { ResponseStreamEvent } from "../../wire/responses-response.js";
import { errorBody } from "../error-mapper.js";
import { observedEvents, type RunRouteOptions, runForRequest, streamErrorBody } from "../run-request.js";
import { writeSse } from "../sse-writer.js";

/**
 * `POST /responses`: the Responses API over the same run engine as chat completions. The
 * request becomes the engine's request, the run's events are rendered as Responses events;
 * a complete response is those events collected.
 */
export function registerResponsesRoute(app: FastifyInstance, options: RunRouteOptions): void {
  app.post(
    "/responses",
    { bodyLimit: options.bodyLimit, schema: { summary: "Run a graph as a response (the Responses API)", tags: ["responses"] } },
    async (request, reply) => {
      const parsed = parseResponsesRequest(request.body);
      const streaming = parsed.body.stream === true;
      return runForRequest(
        request,
        reply,
        options,
        parsed.request,
        async (run) => {
          const renderer = new ResponseRenderer(responseId(run.interrupt?.runId), parsed.body, run.clientEvents, streaming);
          if (!streaming) {
            for await (const event of streamRun(run)) renderer.render(event);
            return renderer.response;
          }
          async function* events(): AsyncGenerator<ResponseStreamEvent> {
            yield* renderer.start();
            try {
              for await (const event of observedEvents(request, options, run, streamRun(run))) yield* renderer.render(event);
            } catch (error) {
              yield* renderer.fail(streamErrorBody(request, reply, options, run, error));
            }
          }
          await writeSse(reply, events(), {
            keepAliveMs: options.keepAliveMs,
            typedEvents: true,
            errorFrame: (error) => errorBody(streamErrorBody(request, reply, options, run, error)),
          });
          return reply;
        },
        parsed.resume,
      );
    },
  );
}
