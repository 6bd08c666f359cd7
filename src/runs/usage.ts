import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { LLMResult } from "@langchain/core/outputs";
import type { Usage } from "../wire/response.js";

/** Undefined while the client takes what a run sends; a promise that settles once it does again (or has gone). */
export type ClientFlow = () => Promise<void> | undefined;

interface UsageMetadataLike {
  input_tokens?: number;
  output_tokens?: number;
  total_tokens?: number;
  input_token_details?: { cache_read?: number; audio?: number };
  output_token_details?: { reasoning?: number; audio?: number };
}

/**
 * Sums the usage that providers report on every chat-model call of one run, nested
 * subgraphs and tools included (callbacks propagate to child runs). Never estimates.
 *
 * Being the run's one handler that every model awaits, it also carries the run's backpressure
 * (`flow`, a streamed run's): a model that streams awaits its callbacks on every token, and
 * this one waits there while the client's connection is full (see `http/writable.ts`). A
 * handler of its own for that cost a second callback per token: six points of streaming
 * throughput in the bench.
 */
export class UsageCollector extends BaseCallbackHandler {
  name = "chat_serve_usage";
  // Awaited so the totals are complete when the run returns, even with background callbacks.
  override awaitHandlers = true;
  // Only model calls matter; skipping every other event keeps the per-run cost low.
  override ignoreChain = true;
  override ignoreAgent = true;
  override ignoreRetriever = true;
  override ignoreCustomEvent = true;
  #reported = false;
  #prompt = 0;
  #completion = 0;
  #total = 0;
  #cached = 0;
  #reasoning = 0;
  #sawCached = false;
  #sawReasoning = false;
  readonly #flow: ClientFlow | undefined;

  constructor(flow?: ClientFlow) {
    super();
    this.#flow = flow;
  }

  override handleLLMNewToken(): Promise<void> | undefined {
    return this.#flow?.();
  }

  override handleLLMEnd(output: LLMResult): void {
    let foundOnMessages = false;
    for (const generations of output.generations) {
      for (const generation of generations) {
        const usage = (generation as { message?: { usage_metadata?: UsageMetadataLike } }).message?.usage_metadata;
        if (usage === undefined) continue;
        foundOnMessages = true;
        this.add(usage);
      }
    }
    if (foundOnMessages) return;
    // Older integrations report only in llmOutput.
    const tokenUsage = (output.llmOutput as { tokenUsage?: Record<string, number> } | undefined)?.tokenUsage;
    if (tokenUsage !== undefined) {
      this.add({
        input_tokens: tokenUsage.promptTokens,
        output_tokens: tokenUsage.completionTokens,
        total_tokens: tokenUsage.totalTokens,
      });
    }
  }

  private add(usage: UsageMetadataLike): void {
    const input = usage.input_tokens ?? 0;
    const output = usage.output_tokens ?? 0;
    this.#reported = true;
    this.#prompt += input;
    this.#completion += output;
    this.#total += usage.total_tokens ?? input + output;
    if (usage.input_token_details?.cache_read !== undefined) {
      this.#sawCached = true;
      this.#cached += usage.input_token_details.cache_read;
    }
    if (usage.output_token_details?.reasoning !== undefined) {
      this.#sawReasoning = true;
      this.#reasoning += usage.output_token_details.reasoning;
    }
  }

  /** The summed usage in wire shape, or undefined when no model reported any. */
  usage(): Usage | undefined {
    if (!this.#reported) return undefined;
    const usage: Usage = {
      prompt_tokens: this.#prompt,
      completion_tokens: this.#completion,
      total_tokens: this.#total,
    };
    if (this.#sawCached) usage.prompt_tokens_details = { cached_tokens: this.#cached };
    if (this.#sawReasoning) usage.completion_tokens_details = { reasoning_tokens: this.#reasoning };
    return usage;
  }
}
