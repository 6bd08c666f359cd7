import type {
  ChatCompletionChunk,
  ChunkDelta,
  ClientEventWire,
  FinishReason,
  ToolCallDelta,
  UrlCitation,
  Usage,
  WireToolCallOut,
} from "../../wire/response.js";

/**
 * Builds the chunks of one streamed completion. Every chunk shares `id`, `created` and
 * `model`; with `include_usage` every chunk but the last carries `usage: null`.
 */
export class ChunkBuilder {
  constructor(
    private readonly id: string,
    private readonly created: number,
    private readonly model: string,
    private readonly includeUsage: boolean,
  ) {}

  private chunk(delta: ChunkDelta, finishReason: FinishReason | null = null): ChatCompletionChunk {
    const chunk: ChatCompletionChunk = {
      id: this.id,
      object: "chat.completion.chunk",
      created: this.created,
      model: this.model,
      choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
    };
    if (this.includeUsage) chunk.usage = null;
    return chunk;
  }

  role(): ChatCompletionChunk {
    return this.chunk({ role: "assistant", content: "" });
  }

  content(text: string): ChatCompletionChunk {
    return this.chunk({ content: text });
  }

  reasoning(text: string): ChatCompletionChunk {
    return this.chunk({ reasoning_content: text, reasoning: text });
  }

  toolCalls(calls: readonly WireToolCallOut[]): ChatCompletionChunk {
    const deltas: ToolCallDelta[] = calls.map((call, index) => ({ index, ...call }));
    return this.chunk({ tool_calls: deltas });
  }

  event(event: ClientEventWire): ChatCompletionChunk {
    return { ...this.chunk({}), graph_chat_serve: { schema_version: 1, event } };
  }

  finish(reason: FinishReason, annotations: readonly UrlCitation[]): ChatCompletionChunk {
    return this.chunk(annotations.length > 0 ? { annotations: [...annotations] } : {}, reason);
  }

  usage(usage: Usage): ChatCompletionChunk {
    return { id: this.id, object: "chat.completion.chunk", created: this.created, model: this.model, choices: [], usage };
  }
}
