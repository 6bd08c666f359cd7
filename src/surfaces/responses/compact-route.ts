import type { FastifyRequest } from "fastify";
import type { z } from "zod";
import { compactItems, compactionOutput } from "../../dialects/responses/compaction.js";
import { countInputTokens } from "../../dialects/responses/input-tokens.js";
import {
  engineRequest,
  itemsToMessages,
  type ParsedResponsesRequest,
  parseResponsesRequest,
} from "../../dialects/responses/parse-responses-request.js";
import { responseId } from "../../dialects/responses/response-id.js";
import { ResponseRenderer } from "../../dialects/responses/response-renderer.js";
import { saveResponse } from "../../dialects/responses/responses-run.js";
import { resolveStoredContext, storeDeadline } from "../../dialects/responses/stored-context.js";
import { toStoredItems } from "../../dialects/responses/stored-items.js";
import { InvalidRequestError, UnknownParameterError } from "../../errors/catalogue.js";
import { type RunRouteOptions, requestScope } from "../../http/run-request.js";
import { assertVisible } from "../../http/visibility.js";
import { bodyIssue } from "../../util/describe-issue.js";
import { compactRequestSchema, type InputItem } from "../../wire/responses-request.js";
import type { ResponseStreamEvent } from "../../wire/responses-response.js";

/** The tokens a list of items comes to, counted as a run's input would be. */
async function tokensOf(model: string, items: InputItem[]): Promise<number> {
  return countInputTokens(engineRequest({ model, input: [] }, itemsToMessages(items)));
}

/**
 * A response whose input ends with a `compaction_trigger` (Codex's remote compaction): the
 * conversation so far (what it continues, then its input) compacted into one `compaction`
 * output item, as `/responses/compact` compacts it; no graph runs. It is stored (unless
 * `store: false`) and continued like any response; on a stateful graph's chain it keeps the
 * thread where it stood.
 */
export async function compactionResponse(
  options: RunRouteOptions,
  parsed: ParsedResponsesRequest,
  scope: string,
  streaming: boolean,
): Promise<{ renderer: ResponseRenderer; events: ResponseStreamEvent[] }> {
  const { registry } = options;
  const { model } = parsed.body;
  registry.getGraph(model); // an unknown model: its 404 (model_not_found)
  const context = await resolveStoredContext({
    store: registry.store,
    scope,
    parsed,
    stateful: false,
    responseId: responseId(),
    timeoutMs: storeDeadline(registry.store, options.backendTimeoutMs),
  });
  const items = [...context.before, ...parsed.items];
  const engine = engineRequest(parsed.body, itemsToMessages(items, { earlier: context.before.length }));
  const item = compactionOutput(items);
  const [inputTokens, outputTokens] = await Promise.all([countInputTokens(engine), tokensOf(model, [item])]);
  const renderer = new ResponseRenderer(responseId(), parsed.body, false, streaming, {
    ...(parsed.conversationId === undefined ? {} : { conversationId: parsed.conversationId }),
  });
  const events = renderer.compacted(item, {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: inputTokens + outputTokens,
  });
  const resolved = { scope, stateful: false, context, engine, plannedId: renderer.response.id };
  await saveResponse(options, parsed, resolved, { thread: { point: context.previous?.thread } }, renderer);
  return { renderer, events };
}

/**
 * `POST /responses/compact`: the conversation a request names (its input, after the stored
 * response it continues) compacted (see `compactItems`), as Open Responses' `CompactResource`.
 * The `instructions` a client sends for a model's summary are accepted and not used.
 */
export async function compactConversation(request: FastifyRequest, options: RunRouteOptions) {
  const parsedBody = compactRequestSchema.safeParse(request.body);
  if (!parsedBody.success) {
    const issue = parsedBody.error.issues[0];
    if (issue?.code === "unrecognized_keys" && issue.path.length === 0) throw new UnknownParameterError(String(issue.keys[0]));
    const { message, param } = bodyIssue(parsedBody.error as unknown as z.ZodError);
    throw new InvalidRequestError(message, { param });
  }
  const { model, input, previous_response_id: previous } = parsedBody.data;
  assertVisible(options.registry, request.chatServeCaller, model);
  const { registry } = options;
  registry.getGraph(model); // an unknown model: its 404 (model_not_found)
  if ((input === undefined || input === null || input.length === 0) && (previous === undefined || previous === null)) {
    throw new InvalidRequestError("Give the conversation to compact: its input, or the previous_response_id it continues.", {
      param: "input",
    });
  }
  const parsed = parseResponsesRequest({
    model,
    input: input ?? [],
    ...(previous == null ? {} : { previous_response_id: previous }),
    store: false,
  });
  const scope = await requestScope(request, options.checkpointScope);
  // The stored chain as items, whatever the graph (a stateful graph's thread holds the same turns).
  const context = await resolveStoredContext({
    store: registry.store,
    scope,
    parsed: parsed.resume === undefined ? parsed : { ...parsed, previousResponseId: previous ?? undefined },
    stateful: false,
    responseId: responseId(),
    timeoutMs: storeDeadline(registry.store, options.backendTimeoutMs),
  });
  const items = [...context.before, ...parsed.items];
  const output = compactItems(items);
  const [inputTokens, outputTokens] = await Promise.all([tokensOf(model, items), tokensOf(model, output)]);
  return {
    id: responseId(),
    object: "response.compaction",
    created_at: Math.floor(Date.now() / 1000),
    output: toStoredItems(output),
    usage: {
      input_tokens: inputTokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: outputTokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: inputTokens + outputTokens,
    },
  };
}
