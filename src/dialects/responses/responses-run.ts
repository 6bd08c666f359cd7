import type { PausedThread } from "../../coordination/pending-run-index.js";
import { InvalidRequestError, StoredObjectNotFoundError } from "../../errors/catalogue.js";
import type { GraphRegistry } from "../../registry/graph-registry.js";
import type { PreparedRun } from "../../runs/prepare-run.js";
import type { ResponseRecord, StoredItem } from "../../store/conversation-store.js";
import type { ChatCompletionRequest } from "../../wire/request.js";
import type { ParsedResponsesRequest } from "./parse-responses-request.js";
import { engineRequest, itemsToMessages } from "./parse-responses-request.js";
import { responseId } from "./response-id.js";
import { ResponseRenderer } from "./response-renderer.js";
import { resolveStoredContext, type StoredContext, storeCall, storeDeadline } from "./stored-context.js";
import { toStoredItems } from "./stored-items.js";

// What a Responses run resolves before it runs and stores when it ends: shared by the
// request that runs in the foreground and the worker that runs a background one.

interface Backing {
  registry: GraphRegistry;
  backendTimeoutMs: number;
}

/** What one POST /responses resolved before its run: the scope, the stored context, the engine's request. */
export interface ResolvedRequest {
  scope: string;
  stateful: boolean;
  context: StoredContext;
  engine: ChatCompletionRequest;
  /** The id of a response that does not pause a run (a paused run's names the run). */
  plannedId: string;
}

/**
 * Resolves a Responses request in its scope: what it continues (stored responses, a
 * conversation, a thread) and the request the run engine takes. Every client error is raised
 * here, before any graph runs.
 */
export async function planResponsesRun(
  options: Backing,
  parsed: ParsedResponsesRequest,
  scope: string,
  plannedId: string = responseId(),
): Promise<ResolvedRequest> {
  const { registry } = options;
  const model = parsed.body.model;
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
    timeoutMs: storeDeadline(registry.store, options.backendTimeoutMs),
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
export async function saveResponse(
  options: Backing,
  parsed: ParsedResponsesRequest,
  resolved: ResolvedRequest,
  run: Pick<PreparedRun, "thread" | "interrupt"> | { thread: { point: PausedThread | undefined }; interrupt?: undefined },
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
  const saved = await storeCall(storeDeadline(options.registry.store, options.backendTimeoutMs), () =>
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

/** The renderer of a foreground response's run: a paused run's response is named after the run. */
export function runRenderer(
  run: PreparedRun,
  parsed: ParsedResponsesRequest,
  resolved: ResolvedRequest,
  streaming: boolean,
): ResponseRenderer {
  const id = run.interrupt === undefined ? resolved.plannedId : responseId(run.interrupt.runId);
  return new ResponseRenderer(id, parsed.body, run.clientEvents, streaming, {
    ...(parsed.conversationId === undefined ? {} : { conversationId: parsed.conversationId }),
  });
}
