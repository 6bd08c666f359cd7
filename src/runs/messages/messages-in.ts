import { AIMessage, type BaseMessage, HumanMessage, type MessageContent, SystemMessage, ToolMessage } from "@langchain/core/messages";
import type { ChatMessage, WireToolCall } from "../../wire/request.js";

type WireContent = string | readonly { type: string; [key: string]: unknown }[] | null | undefined;

/** Wire content parts become LangChain content blocks; text parts keep their shape. */
function toContent(content: WireContent): MessageContent {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  return content.map((part) => {
    if (part.type === "refusal") return { type: "text", text: String(part.refusal) };
    return { ...part };
  }) as MessageContent;
}

function toToolCalls(calls: readonly WireToolCall[]) {
  const toolCalls: { id: string; name: string; args: Record<string, unknown>; type: "tool_call" }[] = [];
  const invalidToolCalls: { id: string; name: string; args: string; error: string; type: "invalid_tool_call" }[] = [];
  for (const call of calls) {
    try {
      const args: unknown = JSON.parse(call.function.arguments || "{}");
      if (args !== null && typeof args === "object" && !Array.isArray(args)) {
        toolCalls.push({ id: call.id, name: call.function.name, args: args as Record<string, unknown>, type: "tool_call" });
        continue;
      }
    } catch {
      // Kept below as an invalid tool call, as LangChain does for a provider's malformed JSON.
    }
    invalidToolCalls.push({
      id: call.id,
      name: call.function.name,
      args: call.function.arguments,
      error: "arguments are not a JSON object",
      type: "invalid_tool_call",
    });
  }
  return { toolCalls, invalidToolCalls };
}

/** Converts validated wire messages into LangChain messages (graph input). */
export function toLangChainMessages(messages: readonly ChatMessage[]): BaseMessage[] {
  return messages.map((message): BaseMessage => {
    switch (message.role) {
      case "system":
      case "developer":
        return new SystemMessage({ content: toContent(message.content), name: message.name });
      case "user":
        return new HumanMessage({ content: toContent(message.content), name: message.name });
      case "assistant": {
        const { toolCalls, invalidToolCalls } = toToolCalls(message.tool_calls ?? []);
        return new AIMessage({
          content: toContent(message.content),
          name: message.name,
          tool_calls: toolCalls,
          invalid_tool_calls: invalidToolCalls,
        });
      }
      default:
        return new ToolMessage({ content: toContent(message.content), tool_call_id: message.tool_call_id });
    }
  });
}
