import type { BaseMessage } from "@langchain/core/messages";

/**
 * Reasoning a model gave beside its answer. `summary`: a summary of it (OpenAI's reasoning
 * summaries); `raw`: the reasoning itself (DeepSeek-R1, Qwen3, gpt-oss, Claude's thinking).
 */
export interface Reasoning {
  text: string;
  form: "summary" | "raw";
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

/** OpenAI's reasoning item (`additional_kwargs.reasoning`): its summary parts, joined. */
function summaryText(reasoning: Record<string, unknown>): string {
  const summary = reasoning.summary;
  if (!Array.isArray(summary)) return "";
  return summary.map((part) => (isObject(part) && typeof part.text === "string" ? part.text : "")).join("");
}

/** The text of LangChain's standard `reasoning` content blocks, joined. */
function blockText(message: BaseMessage): string {
  let text = "";
  for (const block of message.contentBlocks) {
    if (block.type === "reasoning" && typeof block.reasoning === "string") text += block.reasoning;
  }
  return text;
}

/**
 * The reasoning of one model message or chunk: LangChain's `reasoning` content blocks (which
 * its provider translators fill from each provider's own format), else
 * `additional_kwargs.reasoning_content`, else `additional_kwargs.reasoning`. OpenAI's summary
 * object marks it a summary; everything else is raw reasoning. A message whose content is a
 * plain string and that has neither field has none, without building content blocks.
 */
export function messageReasoning(message: BaseMessage): Reasoning | undefined {
  const kwargs = (message.additional_kwargs ?? {}) as Record<string, unknown>;
  const openAISummary = isObject(kwargs.reasoning) ? kwargs.reasoning : undefined;
  const form = openAISummary !== undefined ? "summary" : "raw";
  if (Array.isArray(message.content)) {
    const text = blockText(message);
    if (text !== "") return { text, form };
  }
  if (typeof kwargs.reasoning_content === "string" && kwargs.reasoning_content !== "") {
    return { text: kwargs.reasoning_content, form: "raw" };
  }
  if (typeof kwargs.reasoning === "string" && kwargs.reasoning !== "") return { text: kwargs.reasoning, form: "raw" };
  if (openAISummary !== undefined) {
    const text = summaryText(openAISummary);
    if (text !== "") return { text, form: "summary" };
  }
  return undefined;
}
