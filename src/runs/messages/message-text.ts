import type { BaseMessage } from "@langchain/core/messages";

/** A text content block as LangChain messages carry it, possibly with citation annotations. */
export interface TextBlock {
  type: "text";
  text: string;
  annotations?: unknown[];
}

function isTextBlock(block: unknown): block is TextBlock {
  return (
    typeof block === "object" &&
    block !== null &&
    (block as { type?: unknown }).type === "text" &&
    typeof (block as { text?: unknown }).text === "string"
  );
}

/** The text blocks of a message, in order; string content is one block. */
export function textBlocks(message: Pick<BaseMessage, "content">): TextBlock[] {
  const { content } = message;
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  if (!Array.isArray(content)) return [];
  return (content as unknown[]).filter(isTextBlock);
}

/** The visible text of a message: its text blocks joined without separators. */
export function messageText(message: Pick<BaseMessage, "content">): string {
  // A streamed token's content is usually a plain string.
  if (typeof message.content === "string") return message.content;
  return textBlocks(message)
    .map((block) => block.text)
    .join("");
}
