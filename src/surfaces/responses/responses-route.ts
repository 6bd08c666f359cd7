import { setTimeout as sleep } from "node:timers/promises";
import type { FastifyReply, FastifyRequest } from "fastify";
import { type ParsedResponsesRequest, parseResponsesRequest, storedId } from "../../dialects/responses/parse-responses-request.js";
import { responseFrames } from "../../dialects/responses/response-frames.js";
import { planResponsesRun, runRenderer, saveResponse } from "../../dialects/responses/responses-run.js";
import { storeCall } from "../../dialects/responses/stored-context.js";
import { InvalidRequestError, StoredObjectNotFoundError } from "../../errors/catalogue.js";
import { toServeError } from "../../errors/to-serve-error.js";
import { reattach, startingAfter, submitBackground, TERMINAL } from "../../http/background-routes.js";
import { errorBody } from "../../http/error-mapper.js";
import { idempotent } from "../../http/idempotency.js";
import type { RouteTable } from "../../http/lazy-routes.js";
import { observedEvents, type RunRouteOptions, requestScope, runForRequest, streamErrorBody } from "../../http/run-request.js";
import { writeSse } from "../../http/sse-writer.js";
import { assertVisible } from "../../http/visibility.js";
import { type RunStreamEvent, streamRun } from "../../runs/stream-run.js";
import type { ResponseObject } from "../../wire/responses-response.js";
import { listPage, pageQuery, releaseThreads } from "./stored-objects.js";

/**
 * The Responses API over the same run engine as chat completions: `POST /responses` (the
 * request becomes the engine's request, the run's events are rendered as Responses events,
 * a complete response is those events collected), and the stored responses.
 */
export function addResponsesRoutes(routes: RouteTable, options: RunRouteOptions): void {
  routes.post("/responses", async (request, reply) =>
    idempotent(request, reply, options, "responses", async (queued) => {
      const parsed = parseResponsesRequest(request.body);
      const streaming = parsed.body.stream === true;
      assertVisible(options.registry, request.chatServeCaller, parsed.body.model);
      if (parsed.compact === true) return answerCompaction(request, reply, options, parsed);
      if (parsed.body.background === true) return submitBackground(request, reply, options, parsed, queued);
      const resolved = await planResponsesRun(options, parsed, await requestScope(request, options.checkpointScope));
      return runForRequest(
        request,
        reply,
        options,
        resolved.engine,
        async (run) => {
          const renderer = runRenderer(run, parsed, resolved, streaming);
          const render = async (event: RunStreamEvent) => {
            const events = renderer.render(event);
            if (event.kind === "final") await saveResponse(options, parsed, resolved, run, renderer);
            return events;
          };
          if (!streaming) {
            for await (const event of streamRun(run)) await render(event);
            return renderer.response;
          }
          const frames = responseFrames(renderer);
          await writeSse(
            reply,
            observedEvents(request, options, run, streamRun(run)),
            {
              keepAliveMs: options.keepAliveMs,
              stalledClientMs: options.stalledClientMs,
              typedEvents: true,
              errorFrame: (error) => errorBody(streamErrorBody(request, reply, options, run, error)),
            },
            {
              first: renderer.start(),
              of: (event) => (event.kind === "final" ? render(event) : frames(event)),
              fail: (error) => renderer.fail(streamErrorBody(request, reply, options, run, error)),
            },
          );
          return reply;
        },
        { resumeOf: parsed.resume, thread: resolved.context.thread },
      );
    }),
  );

  // What the request's input comes to in tokens, with what it continues; no graph runs, nothing is stored.
  routes.post("/responses/input_tokens", async (request) => {
    const parsed = parseResponsesRequest(request.body);
    assertVisible(options.registry, request.chatServeCaller, parsed.body.model);
    const resolved = await planResponsesRun(options, parsed, await requestScope(request, options.checkpointScope));
    const { countInputTokens } = await import("../../dialects/responses/input-tokens.js");
    return { object: "response.input_tokens", input_tokens: await countInputTokens(resolved.engine) };
  });

  // A conversation's input compacted into a shorter one that continues it; no graph runs, nothing is stored.
  routes.post("/responses/compact", async (request) => {
    const { compactConversation } = await import("./compact-route.js");
    return compactConversation(request, options);
  });

  routes.post("/responses/:id/cancel", async (request) => {
    const record = await stored(request);
    const response = record.response as unknown as ResponseObject;
    if (response.background !== true) {
      throw new InvalidRequestError("Only background responses can be cancelled; this one ran in the foreground.", {
        param: "response_id",
      });
    }
    if (TERMINAL.has(response.status)) return response;
    await options.background?.cancel(record.id);
    // The worker saves the response as cancelled; wait for that, within a bound.
    const deadline = Date.now() + Math.max(5_000, options.backendTimeoutMs);
    for (;;) {
      const now = await storeCall(options.backendTimeoutMs, () => options.registry.store.getResponse(record.scope, record.id));
      const current = now?.response as unknown as ResponseObject | undefined;
      if (current === undefined || TERMINAL.has(current.status) || Date.now() > deadline) return current ?? response;
      await sleep(25);
    }
  });

  const stored = async (request: FastifyRequest) => {
    const id = storedId((request.params as { id: string }).id, "resp", "response_id");
    const scope = await requestScope(request, options.checkpointScope);
    const record = await storeCall(options.backendTimeoutMs, () => options.registry.store.getResponse(scope, id));
    if (record === undefined) throw new StoredObjectNotFoundError("response", id);
    return record;
  };

  routes.get("/responses/:id", async (request, reply) => {
    const query = request.query as Record<string, unknown>;
    const unknown = Object.keys(query).find((key) => !["stream", "include", "include[]", "starting_after"].includes(key));
    if (unknown !== undefined) {
      throw new InvalidRequestError(`Unrecognized query parameter: ${unknown}.`, { param: unknown, code: "unknown_parameter" });
    }
    if (query.stream !== undefined && !["true", "false"].includes(String(query.stream))) {
      throw new InvalidRequestError("stream must be true or false.", { param: "stream" });
    }
    const after = startingAfter(query.starting_after);
    const record = await stored(request);
    if (query.stream !== "true") return record.response;
    return reattach(reply, options, record.response as unknown as ResponseObject, after);
  });

  routes.get("/responses/:id/input_items", async (request) => {
    const page = pageQuery(request.query);
    const record = await stored(request);
    return listPage(record.inputItems, page);
  });

  routes.delete("/responses/:id", async (request) => {
    const id = storedId((request.params as { id: string }).id, "resp", "response_id");
    const scope = await requestScope(request, options.checkpointScope);
    const deleted = await storeCall(options.backendTimeoutMs, () => options.registry.store.deleteResponse(scope, id));
    if (deleted === undefined) throw new StoredObjectNotFoundError("response", id);
    await releaseThreads(options, deleted.released, request.log);
    return { id, object: "response", deleted: true };
  });
}

/** A `compaction_trigger` request (Codex's remote compaction): one `compaction` item, complete or streamed; in the foreground always. */
async function answerCompaction(request: FastifyRequest, reply: FastifyReply, options: RunRouteOptions, parsed: ParsedResponsesRequest) {
  const { compactionResponse } = await import("./compact-route.js");
  const streaming = parsed.body.stream === true;
  const scope = await requestScope(request, options.checkpointScope);
  const { renderer, events } = await compactionResponse(options, parsed, scope, streaming);
  if (!streaming) return renderer.response;
  await writeSse(
    reply,
    (async function* () {})(),
    {
      keepAliveMs: options.keepAliveMs,
      stalledClientMs: options.stalledClientMs,
      typedEvents: true,
      errorFrame: (error) => errorBody(toServeError(error)),
    },
    { first: events, of: () => [], fail: () => [] },
  );
  return reply;
}
