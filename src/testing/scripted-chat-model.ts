import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import { BaseChatModel, type BaseChatModelParams } from "@langchain/core/language_models/chat_models";
import { AIMessage, AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";
import { EventLoopTurns } from "../util/event-loop-turns.js";

/** What a scripted reply may carry besides text. */
export interface ScriptedReply {
  text: string;
  toolCalls?: { id?: string; name: string; args: Record<string, unknown> }[];
}

/** Token counts one call reports; the details are optional, as with real providers. */
export interface ScriptedUsage {
  input: number;
  output: number;
  /** Prompt tokens served from a cache (`input_token_details.cache_read`). */
  cachedInput?: number;
  /** Completion tokens spent on reasoning (`output_token_details.reasoning`). */
  reasoning?: number;
}

export interface ScriptedChatModelOptions extends BaseChatModelParams {
  /** Builds the reply from the conversation the model was called with. */
  respond: (messages: BaseMessage[]) => string | ScriptedReply;
  /**
   * Token counts to report for one call. The default counts whitespace-separated
   * words of the prompt and the reply, the way a provider would report its own
   * tokenizer's numbers.
   */
  usage?: (messages: BaseMessage[], reply: ScriptedReply) => ScriptedUsage;
  /** Milliseconds to wait between streamed chunks (default 0). */
  chunkDelayMs?: number;
}

function countWords(text: string): number {
  const trimmed = text.trim();
  return trimmed === "" ? 0 : trimmed.split(/\s+/u).length;
}

function messageText(message: BaseMessage): string {
  return typeof message.content === "string"
    ? message.content
    : message.content.map((part) => (typeof part === "object" && part !== null && "text" in part ? String(part.text) : "")).join("");
}

/**
 * A chat model that needs no provider: it answers from a script, streams its reply word by
 * word and reports `usage_metadata` like a real provider does. It implements LangChain's
 * real `BaseChatModel` interface, so graphs use it exactly as they would use `ChatOpenAI`.
 *
 * @example
 * ```ts
 * const model = new ScriptedChatModel({ respond: (messages) => `You said: ${messages.at(-1)?.content}` });
 * const reply = await model.invoke("hello");
 * ```
 */
export class ScriptedChatModel extends BaseChatModel {
  private readonly respond: ScriptedChatModelOptions["respond"];
  private readonly usage: NonNullable<ScriptedChatModelOptions["usage"]>;
  private readonly chunkDelayMs: number;

  constructor(options: ScriptedChatModelOptions) {
    super(options);
    this.respond = options.respond;
    this.chunkDelayMs = options.chunkDelayMs ?? 0;
    this.usage =
      options.usage ??
      ((messages, reply) => ({
        input: messages.reduce((sum, message) => sum + countWords(messageText(message)), 0),
        output: countWords(reply.text),
      }));
  }

  _llmType(): string {
    return "scripted";
  }

  private reply(messages: BaseMessage[]): ScriptedReply {
    const reply = this.respond(messages);
    return typeof reply === "string" ? { text: reply } : reply;
  }

  private usageMetadata(messages: BaseMessage[], reply: ScriptedReply) {
    const { input, output, cachedInput, reasoning } = this.usage(messages, reply);
    return {
      input_tokens: input,
      output_tokens: output,
      total_tokens: input + output,
      ...(cachedInput === undefined ? {} : { input_token_details: { cache_read: cachedInput } }),
      ...(reasoning === undefined ? {} : { output_token_details: { reasoning } }),
    };
  }

  private toolCalls(reply: ScriptedReply) {
    return (reply.toolCalls ?? []).map((call, index) => ({
      id: call.id ?? `call_scripted_${index}`,
      name: call.name,
      args: call.args,
      type: "tool_call" as const,
    }));
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const reply = this.reply(messages);
    const message = new AIMessage({
      content: reply.text,
      tool_calls: this.toolCalls(reply),
      usage_metadata: this.usageMetadata(messages, reply),
    });
    return { generations: [{ text: reply.text, message }] };
  }

  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: this["ParsedCallOptions"],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    const reply = this.reply(messages);
    // Words keep their trailing whitespace so the chunks concatenate to the exact reply.
    const pieces = reply.text.match(/\S+\s*|\s+/gu) ?? [];
    // A real provider's tokens arrive over the network, between turns of the event loop; a
    // long scripted reply takes turns too, so it never holds the loop for the whole reply.
    const turns = new EventLoopTurns();
    for (const piece of pieces) {
      options.signal?.throwIfAborted();
      await turns.take();
      if (this.chunkDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.chunkDelayMs));
      const chunk = new ChatGenerationChunk({ text: piece, message: new AIMessageChunk({ content: piece }) });
      yield chunk;
      await runManager?.handleLLMNewToken(piece, undefined, undefined, undefined, undefined, { chunk });
    }
    const toolCalls = this.toolCalls(reply);
    yield new ChatGenerationChunk({
      text: "",
      message: new AIMessageChunk({
        content: "",
        tool_call_chunks: toolCalls.map((call, index) => ({
          id: call.id,
          name: call.name,
          args: JSON.stringify(call.args),
          index,
          type: "tool_call_chunk" as const,
        })),
        usage_metadata: this.usageMetadata(messages, reply),
      }),
    });
  }
}
