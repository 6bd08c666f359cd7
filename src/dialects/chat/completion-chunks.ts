import type { RunStreamEvent } from "../../runs/stream-run.js";
import type { ChatCompletionChunk } from "../../wire/response.js";
import { ChunkBuilder } from "./chunk-builder.js";
import type { CompletionIdentity } from "./completion.js";

/**
 * Turns a run's events into the chunks of a streamed chat completion: the role chunk, text
 * and reasoning deltas and client events in graph order, tool calls as one delta, the finish
 * chunk, and the usage-only chunk when the client asked for it and a model reported usage.
 */
export async function* toCompletionChunks(
  events: AsyncIterable<RunStreamEvent>,
  identity: CompletionIdentity,
  includeUsage: boolean,
): AsyncGenerator<ChatCompletionChunk> {
  const builder = new ChunkBuilder(identity.id, identity.created, identity.model, includeUsage);
  yield builder.role();
  for await (const event of events) {
    if (event.kind === "text") {
      yield builder.content(event.text);
    } else if (event.kind === "reasoning") {
      yield builder.reasoning(event.text);
    } else if (event.kind === "event") {
      yield builder.event(event.event);
    } else {
      if (event.output.toolCalls.length > 0) yield builder.toolCalls(event.output.toolCalls);
      yield builder.finish(event.output.finishReason, event.output.annotations);
      if (includeUsage && event.usage !== undefined) yield builder.usage(event.usage);
    }
  }
}
