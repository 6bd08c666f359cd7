import { type BaseMessageLike, coerceMessageLikeToMessage, isBaseMessage } from "@langchain/core/messages";
import { AgentInvalidBodyError } from "../../errors/catalogue.js";

/**
 * Refuses channel names every object already has (`constructor`, `__proto__`,
 * `__defineGetter__`…): LangGraph keeps a step's writes by channel in plain objects, so a write
 * to one of them leaves the thread's state unreadable for good (every later `getState` throws).
 * Values are an object of channels, or (a command's `update`) a list of `[channel, value]`.
 */
function assertChannelNames(values: unknown, where: string): void {
  if (typeof values !== "object" || values === null) return;
  const names = Array.isArray(values)
    ? values.flatMap((entry) => (Array.isArray(entry) && typeof entry[0] === "string" ? [entry[0]] : []))
    : Object.keys(values);
  const reserved = names.find((name) => name in Object.prototype);
  if (reserved !== undefined) {
    throw new AgentInvalidBodyError(`${where} names the channel '${reserved}', which no graph state can have: every object has it.`);
  }
}

/** A content block a graph's model can read: an object with a string `type` (a text block's `text` a string), or a string. */
function assertContentBlock(block: unknown, at: string): void {
  if (typeof block === "string") return;
  if (typeof block !== "object" || block === null || Array.isArray(block) || typeof (block as { type?: unknown }).type !== "string") {
    throw new AgentInvalidBodyError(`${at} must be a content block: an object with a type, such as { "type": "text", "text": "…" }.`);
  }
  const { type, text } = block as { type: string; text?: unknown };
  if (type === "text" && typeof text !== "string") throw new AgentInvalidBodyError(`${at}.text must be a string.`);
}

/**
 * Refuses `messages` a graph could not read, before they reach its state: a message of an
 * unknown role or type would be written to the thread as it is, and every later read of the
 * thread would fail on it. Checks what LangGraph's messages reducer accepts (LangChain's
 * coercion), for a `messages` key of an object.
 */
export function assertReadableMessages(values: unknown, where: string): void {
  assertChannelNames(values, where);
  if (typeof values !== "object" || values === null || Array.isArray(values)) return;
  const messages = (values as { messages?: unknown }).messages;
  if (messages === undefined) return;
  const list = Array.isArray(messages) ? messages : [messages];
  list.forEach((message, index) => {
    if (isBaseMessage(message)) return;
    const at = `${where}.messages${Array.isArray(messages) ? `.${index}` : ""}`;
    if (message === null || (typeof message !== "object" && typeof message !== "string")) {
      throw new AgentInvalidBodyError(
        `${at} must be a message: an object with a role (or type) and content, a string, or a [role, content] pair.`,
      );
    }
    let content: unknown;
    try {
      content = coerceMessageLikeToMessage(message as BaseMessageLike).content;
    } catch (error) {
      const reason = error instanceof Error ? (error.message.split("\n")[0] ?? "") : "";
      throw new AgentInvalidBodyError(`${at} is not a message LangChain can read: ${reason}`);
    }
    // LangChain takes any content here, and the graph's model fails on it later (`content.map is not a function`).
    if (typeof content !== "string" && !Array.isArray(content)) {
      throw new AgentInvalidBodyError(`${at}.content must be a string or a list of content blocks.`);
    }
    if (Array.isArray(content)) {
      for (const [position, block] of content.entries()) assertContentBlock(block, `${at}.content.${position}`);
    }
  });
}
