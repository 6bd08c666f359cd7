import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import type { BaseLanguageModelInput } from "@langchain/core/language_models/base";
import {
  BaseChatModel,
  type BaseChatModelCallOptions,
  type BaseChatModelParams,
  type BindToolsInput,
} from "@langchain/core/language_models/chat_models";
import { AIMessage, AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";
import type { Runnable } from "@langchain/core/runnables";
import { EventLoopTurns } from "../util/event-loop-turns.js";
import { randomHex } from "../util/random-hex.js";

/** What a scripted reply may carry besides text. */
export interface ScriptedReply {
  text: string;
  toolCalls?: { id?: string; name: string; args: Record<string, unknown> }[];
  /**
   * Reasoning before the answer, streamed before its text. `raw` (the default) arrives as
   * LangChain `reasoning` content blocks, as reasoning models' own reasoning does; `summary`
   * as OpenAI's reasoning summary (`additional_kwargs.reasoning`).
   */
  reasoning?: string;
  reasoningForm?: "raw" | "summary";
}

/** The call options a scripted model sees: LangChain's, plus those OpenAI's models take. */
export interface ScriptedCallOptions extends BaseChatModelCallOptions {
  /** The tools bound with `bindTools`. */
  tools?: BindToolsInput[];
  response_format?: Record<string, unknown>;
  seed?: number;
  reasoning?: { effort?: string; summary?: string };
  parallel_tool_calls?: boolean;
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
  /** Builds the reply from the conversation the model was called with, and the call's options. */
  respond: (messages: BaseMessage[], options: ScriptedCallOptions) => string | ScriptedReply;
  /**
   * Token counts to report for one call. The default counts whitespace-separated
   * words of the prompt and the reply, the way a provider would report its own
   * tokenizer's numbers.
   */
  usage?: (messages: BaseMessage[], reply: ScriptedReply) => ScriptedUsage;
  /** Milliseconds to wait between streamed chunks (default 0). */
  chunkDelayMs?: number;
  /** At most this many words of reply, then `finish_reason: "length"` (what `maxTokens` is to a provider). */
  maxTokens?: number;
  /** Accepted like a provider's sampling fields, and otherwise ignored: a script does not sample. */
  temperature?: number;
  topP?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
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
export class ScriptedChatModel extends BaseChatModel<ScriptedCallOptions> {
  private readonly respond: ScriptedChatModelOptions["respond"];
  private readonly usage: NonNullable<ScriptedChatModelOptions["usage"]>;
  private readonly chunkDelayMs: number;
  /** The token limit, in words; undefined for none. */
  readonly maxTokens: number | undefined;

  constructor(options: ScriptedChatModelOptions) {
    super(options);
    this.respond = options.respond;
    this.chunkDelayMs = options.chunkDelayMs ?? 0;
    this.maxTokens = options.maxTokens;
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

  /** Binds tools the way provider models do: they reach `respond` as the `tools` call option. */
  override bindTools(
    tools: BindToolsInput[],
    kwargs?: Partial<ScriptedCallOptions>,
  ): Runnable<BaseLanguageModelInput, AIMessageChunk, ScriptedCallOptions> {
    return this.withConfig({ ...kwargs, tools });
  }

  /**
   * The scripted reply as a provider would send it: cut before the first stop sequence, then
   * at the token limit (words here), with the finish reason that says which.
   */
  private reply(
    messages: BaseMessage[],
    options: ScriptedCallOptions,
  ): ScriptedReply & { finishReason: "stop" | "length"; stopSequence?: string } {
    const scripted = this.respond(messages, options);
    const reply = typeof scripted === "string" ? { text: scripted } : scripted;
    let text = reply.text;
    // The stop sequence that comes first in the reply ends it.
    let stopSequence: string | undefined;
    for (const stop of options.stop ?? []) {
      const at = text.indexOf(stop);
      if (at >= 0) {
        text = text.slice(0, at);
        stopSequence = stop;
      }
    }
    const words = text.match(/\S+\s*|\s+/gu) ?? [];
    if (this.maxTokens !== undefined && countWords(text) > this.maxTokens) {
      let cut = "";
      let kept = 0;
      for (const piece of words) {
        if (piece.trim() !== "") kept += 1;
        if (kept > this.maxTokens) break;
        cut += piece;
      }
      return { ...reply, text: cut.trimEnd(), finishReason: "length" };
    }
    return { ...reply, text, finishReason: "stop", ...(stopSequence === undefined ? {} : { stopSequence }) };
  }

  /** The finish reason, and the stop sequence that ended the reply as Anthropic's models report it. */
  private responseMetadata(reply: { finishReason: "stop" | "length"; stopSequence?: string }) {
    return { finish_reason: reply.finishReason, ...(reply.stopSequence === undefined ? {} : { stop_sequence: reply.stopSequence }) };
  }

  private usageMetadata(messages: BaseMessage[], reply: ScriptedReply) {
    const { input, output, cachedInput, reasoning: scriptedReasoning } = this.usage(messages, reply);
    // Reasoning is output a provider bills: its words count, unless the script said otherwise.
    const reasoning = scriptedReasoning ?? (reply.reasoning === undefined ? undefined : countWords(reply.reasoning));
    const total = output + (scriptedReasoning === undefined && reasoning !== undefined ? reasoning : 0);
    return {
      input_tokens: input,
      output_tokens: total,
      total_tokens: input + total,
      ...(cachedInput === undefined ? {} : { input_token_details: { cache_read: cachedInput } }),
      ...(reasoning === undefined ? {} : { output_token_details: { reasoning } }),
    };
  }

  private toolCalls(reply: ScriptedReply) {
    return (reply.toolCalls ?? []).map((call) => ({
      // A fresh id each reply, as a provider gives: ids that repeat across turns make clients
      // (Codex, Claude Code) take a new call for one they already answered.
      id: call.id ?? `call_${randomHex(24)}`,
      name: call.name,
      args: call.args,
      type: "tool_call" as const,
    }));
  }

  /** Reasoning as the message carries it: content blocks before the text, or OpenAI's summary object. */
  private reasoningFields(reasoning: string | undefined, form: ScriptedReply["reasoningForm"], text: string) {
    if (reasoning === undefined || reasoning === "") return { content: text };
    if (form === "summary") {
      return {
        content: text,
        additional_kwargs: { reasoning: { type: "reasoning", summary: [{ type: "summary_text", text: reasoning, index: 0 }] } },
      };
    }
    // One index for the reply's reasoning, as providers send it: LangChain merges the chunks of a
    // stream into one block (without it, a client such as assistant-ui shows a block per word).
    return {
      content: [{ type: "reasoning" as const, reasoning, index: 0 }, ...(text === "" ? [] : [{ type: "text" as const, text }])],
    };
  }

  async _generate(messages: BaseMessage[], options: this["ParsedCallOptions"]): Promise<ChatResult> {
    const reply = this.reply(messages, options);
    const message = new AIMessage({
      ...this.reasoningFields(reply.reasoning, reply.reasoningForm, reply.text),
      tool_calls: this.toolCalls(reply),
      usage_metadata: this.usageMetadata(messages, reply),
      response_metadata: this.responseMetadata(reply),
    });
    return { generations: [{ text: reply.text, message }] };
  }

  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: this["ParsedCallOptions"],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    const reply = this.reply(messages, options);
    // Words keep their trailing whitespace so the chunks concatenate to the exact reply.
    const pieces = reply.text.match(/\S+\s*|\s+/gu) ?? [];
    // A real provider's tokens arrive over the network, between turns of the event loop; a
    // long scripted reply takes turns too, so it never holds the loop for the whole reply.
    const turns = new EventLoopTurns();
    for (const piece of reply.reasoning?.match(/\S+\s*|\s+/gu) ?? []) {
      options.signal?.throwIfAborted();
      await turns.take();
      if (this.chunkDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.chunkDelayMs));
      const chunk = new ChatGenerationChunk({
        text: "",
        message: new AIMessageChunk(this.reasoningFields(piece, reply.reasoningForm, "")),
      });
      yield chunk;
      // Providers report every chunk, reasoning included: LangGraph's messages stream hears them so.
      await runManager?.handleLLMNewToken("", undefined, undefined, undefined, undefined, { chunk });
    }
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
        response_metadata: this.responseMetadata(reply),
      }),
    });
  }
}
