import type { FastifyReply, FastifyRequest } from "fastify";
import { agUiEvents, type StepEvent } from "../../dialects/ag-ui/ag-ui-events.js";
import { parseRunInput } from "../../dialects/ag-ui/parse-run-input.js";
import { errorBody } from "../../http/error-mapper.js";
import { observedEvents, runForRequest, streamErrorBody } from "../../http/run-request.js";
import { writeSse } from "../../http/sse-writer.js";
import type { SurfaceContext } from "../../http/surface.js";
import type { PreparedRun } from "../../runs/prepare-run.js";
import { type RunStreamEvent, streamRun } from "../../runs/stream-run.js";

/**
 * The run's events with its steps between them, in the order they happened: the graph reports
 * a node's start and end (`onStep`) while the run's stream advances to its next event.
 */
async function* withSteps(run: PreparedRun, events: AsyncIterable<RunStreamEvent>): AsyncGenerator<RunStreamEvent | StepEvent> {
  const steps: StepEvent[] = [];
  run.onStep = (node, phase) => {
    // LangGraph's own entry and exit nodes are not steps of the graph a person wrote.
    if (!node.startsWith("__")) steps.push({ kind: "step", node, phase });
  };
  for await (const event of events) {
    yield* steps.splice(0);
    yield event;
  }
  yield* steps.splice(0);
}

/**
 * `POST /ag-ui/{model}`: a `RunAgentInput`, run as a turn of the thread its `threadId` names
 * (or the resume of the interrupts the run before ended with), answered as AG-UI events. What
 * is wrong with the input is a JSON error before any event; a failure after RUN_STARTED is
 * RUN_ERROR, then the stream ends.
 */
export async function answerRunInput(
  request: FastifyRequest<{ Params: { model: string } }>,
  reply: FastifyReply,
  context: SurfaceContext,
): Promise<FastifyReply | undefined> {
  const { input, request: engineRequest, resumeOf } = parseRunInput(request.params.model, request.body);
  return runForRequest(
    request,
    reply,
    context,
    engineRequest,
    async (run) => {
      const events = agUiEvents({ threadId: input.threadId, runId: input.runId });
      await writeSse(
        reply,
        withSteps(run, observedEvents(request, context, run, streamRun(run))),
        {
          keepAliveMs: context.keepAliveMs,
          stalledClientMs: context.stalledClientMs,
          errorFrame: (error) => errorBody(streamErrorBody(request, reply, context, run, error)),
          // AG-UI's stream ends with its RUN_FINISHED or RUN_ERROR event, not `[DONE]`.
          endWithDone: false,
        },
        {
          first: events.first,
          of: (event) => events.of(event),
          fail: (error) => {
            const failure = streamErrorBody(request, reply, context, run, error);
            return events.fail(failure.message, failure.code);
          },
        },
      );
      return reply;
    },
    { thread: { kind: "session", session: input.threadId }, ...(resumeOf === undefined ? {} : { resumeOf }) },
  );
}
