import type { FastifyInstance, FastifyRequest } from "fastify";
import {
  engineRequest,
  itemsToMessages,
  type ParsedResponsesRequest,
  parseResponsesRequest,
  storedId,
} from "../../dialects/responses/parse-responses-request.js";
import { responseId } from "../../dialects/responses/response-id.js";
import { ResponseRenderer } from "../../dialects/responses/response-renderer.js";
import { resolveStoredContext, type StoredContext, storeCall } from "../../dialects/responses/stored-context.js";
import { toStoredItems } from "../../dialects/responses/stored-items.js";
import { InvalidRequestError, StoredObjectNotFoundError, UnsupportedParameterError } from "../../errors/catalogue.js";
import type { PreparedRun } from "../../runs/prepare-run.js";
import { type RunStreamEvent, streamRun } from "../../runs/stream-run.js";
import type { ResponseRecord, StoredItem } from "../../store/conversation-store.js";
import type { ChatCompletionRequest } from "../../wire/request.js";
import type { ResponseStreamEvent } from "../../wire/responses-response.js";
import { errorBody } from "../error-mapper.js";
import { observedEvents, type RunRouteOptions, requestScope, runForRequest, streamErrorBody } from "../run-request.js";
import { writeSse } from "../sse-writer.js";
import { assertVisible } from "./models.js";
import { listPage, pageQuery, releaseThreads } from "./stored-objects.js";

/** What one POST /responses resolved before its run: the scope, the stored context, the engine's request. */
interface ResolvedRequest {
  scope: string;
  stateful: boolean;
  context: StoredContext;
  engine: ChatCompletionRequest;
  /** The id of a response that does not pause a run (a paused run's names the run). */
  plannedId: string;
}

async function resolveRequest(request: FastifyRequest, options: RunRouteOptions, parsed: ParsedResponsesRequest): Promise<ResolvedRequest> {
  const { registry } = options;
  const model = parsed.body.model;
  assertVisible(registry, request.chatServeCaller, model);
  const scope = await requestScope(request, options.checkpointScope);
  const plannedId = responseId();
  if (parsed.resume !== undefined) {
    return { scope, stateful: false, context: { before: [] }, engine: engineRequest(parsed.body, []), plannedId };
  }
  const stateful = await registry.isStateful(model);
  const context = await resolveStoredContext({
    store: registry.store,
    scope,
    parsed,
    stateful,
    responseId: plannedId,
    timeoutMs: options.backendTimeoutMs,
  });
  const messages = itemsToMessages([...context.before, ...parsed.items], {
    earlier: context.before.length,
    threadHasCalls: context.thread !== undefined,
  });
  if (messages.length === 0) throw new InvalidRequestError("input must hold at least one item.", { param: "input" });
  const instructions = context.instructionsOnThread === undefined ? {} : { instructionsOnThread: context.instructionsOnThread };
  return { scope, stateful, context, engine: engineRequest(parsed.body, messages, instructions), plannedId };
}

/**
 * Stores a finished response (unless `store: false`) with its input items, and appends both
 * to its conversation, in one write: before the client hears the response ended, so its next
 * request finds it.
 */
async function saveResponse(
  options: RunRouteOptions,
  parsed: ParsedResponsesRequest,
  resolved: ResolvedRequest,
  run: PreparedRun,
  renderer: ResponseRenderer,
) {
  if (parsed.body.store === false) return;
  // The store keeps its own copy; the renderer changes the response no more once it has ended.
  const response = renderer.response;
  const inputItems = toStoredItems(parsed.items);
  const previous = parsed.body.previous_response_id ?? undefined;
  // Where a stateful graph's thread stands now: after this turn, or where its run paused.
  const point = run.thread?.point ?? run.interrupt?.point;
  const record: ResponseRecord = {
    id: response.id,
    scope: resolved.scope,
    model: response.model,
    createdAt: new Date(response.created_at * 1000),
    response: response as unknown as Record<string, unknown>,
    inputItems,
    ...(previous === undefined ? {} : { previousResponseId: previous }),
    ...(parsed.conversationId === undefined ? {} : { conversationId: parsed.conversationId }),
    ...(point === undefined ? {} : { thread: point }),
  };
  const conversationId = parsed.conversationId;
  const saved = await storeCall(options.backendTimeoutMs, () =>
    options.registry.store.saveResponse(
      record,
      conversationId === undefined
        ? undefined
        : {
            id: conversationId,
            items: [...inputItems, ...(response.output as unknown as StoredItem[])],
            model: response.model,
            ...(point === undefined ? {} : { thread: point }),
            syncThread: resolved.stateful,
            ...(resolved.stateful ? { instructions: parsed.body.instructions ?? null } : {}),
          },
    ),
  );
  if (!saved) throw new StoredObjectNotFoundError("conversation", conversationId ?? "", "conversation");
}

/**
 * The Responses API over the same run engine as chat completions: `POST /responses` (the
 * request becomes the engine's request, the run's events are rendered as Responses events,
 * a complete response is those events collected), and the stored responses.
 */
export function registerResponsesRoute(app: FastifyInstance, options: RunRouteOptions): void {
  app.post(
    "/responses",
    { bodyLimit: options.bodyLimit, schema: { summary: "Run a graph as a response (the Responses API)", tags: ["responses"] } },
    async (request, reply) => {
      const parsed = parseResponsesRequest(request.body);
      const streaming = parsed.body.stream === true;
      const resolved = await resolveRequest(request, options, parsed);
      return runForRequest(
        request,
        reply,
        options,
        resolved.engine,
        async (run) => {
          const id = run.interrupt === undefined ? resolved.plannedId : responseId(run.interrupt.runId);
          const renderer = new ResponseRenderer(id, parsed.body, run.clientEvents, streaming, parsed.conversationId);
          const render = async (event: RunStreamEvent) => {
            const events = renderer.render(event);
            if (event.kind === "final") await saveResponse(options, parsed, resolved, run, renderer);
            return events;
          };
          if (!streaming) {
            for await (const event of streamRun(run)) await render(event);
            return renderer.response;
          }
          async function* events(): AsyncGenerator<ResponseStreamEvent> {
            yield* renderer.start();
            try {
              for await (const event of observedEvents(request, options, run, streamRun(run))) yield* await render(event);
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
        { resumeOf: parsed.resume, thread: resolved.context.thread },
      );
    },
  );

  const stored = async (request: FastifyRequest) => {
    const id = storedId((request.params as { id: string }).id, "resp", "response_id");
    const scope = await requestScope(request, options.checkpointScope);
    const record = await storeCall(options.backendTimeoutMs, () => options.registry.store.getResponse(scope, id));
    if (record === undefined) throw new StoredObjectNotFoundError("response", id);
    return record;
  };

  app.get("/responses/:id", { schema: { summary: "Retrieve a stored response", tags: ["responses"] } }, async (request) => {
    const query = request.query as Record<string, unknown>;
    if (query.stream !== undefined && query.stream !== "false") {
      throw new UnsupportedParameterError("stream is not supported here: a stored response has finished; retrieve it whole.", {
        param: "stream",
      });
    }
    const unknown = Object.keys(query).find((key) => !["stream", "include", "include[]", "starting_after"].includes(key));
    if (unknown !== undefined)
      throw new InvalidRequestError(`Unrecognized query parameter: ${unknown}.`, { param: unknown, code: "unknown_parameter" });
    return (await stored(request)).response;
  });

  app.get(
    "/responses/:id/input_items",
    { schema: { summary: "List a stored response's input items", tags: ["responses"] } },
    async (request) => {
      const page = pageQuery(request.query);
      const record = await stored(request);
      return listPage(record.inputItems, page);
    },
  );

  app.delete("/responses/:id", { schema: { summary: "Delete a stored response", tags: ["responses"] } }, async (request) => {
    const id = storedId((request.params as { id: string }).id, "resp", "response_id");
    const scope = await requestScope(request, options.checkpointScope);
    const deleted = await storeCall(options.backendTimeoutMs, () => options.registry.store.deleteResponse(scope, id));
    if (deleted === undefined) throw new StoredObjectNotFoundError("response", id);
    await releaseThreads(options, deleted.released, request.log);
    return { id, object: "response", deleted: true };
  });
}
