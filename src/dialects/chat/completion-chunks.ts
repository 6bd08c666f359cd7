import type { RunStreamEvent } from "../../runs/stream-run.js";
import { fillSlots, JsonText, jsonParts } from "../../util/json-text.js";
import { type ChatCompletionChunk, NO_USAGE } from "../../wire/response.js";
import { ChunkBuilder } from "./chunk-builder.js";
import type { CompletionIdentity } from "./completion.js";

/** The chunks that open a streamed chat completion, and those each of the run's events becomes. */
export interface CompletionChunks {
  first: ChatCompletionChunk[];
  of(event: RunStreamEvent): ChatCompletionChunk[];
}

/**
 * Turns a run's events into the chunks of a streamed chat completion: the role chunk, text
 * and reasoning deltas and client events in graph order, tool calls as one delta, the finish
 * chunk, and the usage-only chunk when the client asked for it (zeros when no model reported usage).
 * A mapping, not a generator: the SSE writer applies it as the events arrive.
 */
export function completionChunks(identity: CompletionIdentity, includeUsage: boolean): CompletionChunks {
  const builder = new ChunkBuilder(identity.id, identity.created, identity.model, includeUsage);
  return {
    first: [builder.role()],
    of(event) {
      if (event.kind === "text") return [builder.content(event.text)];
      if (event.kind === "reasoning") return [builder.reasoning(event.text)];
      if (event.kind === "event") return [builder.event(event.event)];
      const chunks: ChatCompletionChunk[] = [];
      if (event.output.toolCalls.length > 0) chunks.push(builder.toolCalls(event.output.toolCalls));
      chunks.push(builder.finish(event.output.finishReason, event.output.annotations));
      if (includeUsage) chunks.push(builder.usage(event.usage ?? NO_USAGE));
      return chunks;
    },
  };
}

/**
 * The JSON of a text chunk around its id, created, model and text, made once (with and without
 * `usage: null`): of a token's chunk only the text is new, and of a stream's, the identity.
 */
const TEXT_CHUNK_PARTS = [false, true].map((includeUsage) =>
  jsonParts(4, (id, created, model, text) => new ChunkBuilder(id!, created as unknown as number, model!, includeUsage).content(text!)),
);

/**
 * The same chunks for the SSE writer, a text delta's JSON written from a template made once:
 * the stream's identity goes in once per stream, the text once per token. Chunks otherwise
 * as `completionChunks`.
 */
export function completionFrames(
  identity: CompletionIdentity,
  includeUsage: boolean,
): { first: ChatCompletionChunk[]; of(event: RunStreamEvent): (ChatCompletionChunk | JsonText)[] } {
  const chunks = completionChunks(identity, includeUsage);
  const parts = TEXT_CHUNK_PARTS[includeUsage ? 1 : 0];
  if (parts === undefined) return chunks;
  const [head, tail] = fillSlots(parts, [identity.id, identity.created, identity.model]) as [string, string];
  return {
    first: chunks.first,
    of: (event) => (event.kind === "text" ? [new JsonText(head + JSON.stringify(event.text) + tail)] : chunks.of(event)),
  };
}
