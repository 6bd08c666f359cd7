import type { BaseMessage } from "@langchain/core/messages";
import { randomHex } from "../../util/random-hex.js";
import type { FinishReason, UrlCitation, WireToolCallOut } from "../../wire/response.js";
import { collectCitations } from "./citations-out.js";
import { messageReasoning, type Reasoning } from "./message-reasoning.js";
import { messageText } from "./message-text.js";

/** The assistant turn the service answers with, independent of streaming or not. */
export interface AssistantOutput {
  text: string;
  toolCalls: WireToolCallOut[];
  annotations: UrlCitation[];
  finishReason: FinishReason;
  /** What the model reasoned before it answered, when it said and the graph lets clients see it. */
  reasoning?: Reasoning;
  /** The stop sequence that ended the answer, when the model says which (Anthropic's models do). */
  stopSequence?: string;
}

interface ToolCallLike {
  id?: string;
  name: string;
  args: unknown;
}

function newToolCallId(): string {
  return `call_${randomHex()}`;
}

function toWireToolCall(call: ToolCallLike): WireToolCallOut {
  return {
    id: call.id && call.id.length > 0 ? call.id : newToolCallId(),
    type: "function",
    function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) },
  };
}

function finishReasonOf(message: BaseMessage, hasToolCalls: boolean): FinishReason {
  if (hasToolCalls) return "tool_calls";
  const metadata = (message.response_metadata ?? {}) as Record<string, unknown>;
  const reason = metadata.finish_reason ?? metadata.stop_reason;
  return reason === "length" || reason === "max_tokens" ? "length" : "stop";
}

/** Maps the final assistant message of a run to what the wire carries; its reasoning when `withReasoning`. */
export function toAssistantOutput(message: BaseMessage, withReasoning: boolean): AssistantOutput {
  const annotations: UrlCitation[] = collectCitations(message);
  const toolCalls = ((message as { tool_calls?: ToolCallLike[] }).tool_calls ?? []).map(toWireToolCall);
  const reasoning = withReasoning ? messageReasoning(message) : undefined;
  const finishReason = finishReasonOf(message, toolCalls.length > 0);
  const stopSequence = (message.response_metadata as Record<string, unknown> | undefined)?.stop_sequence;
  return {
    text: messageText(message),
    toolCalls,
    annotations,
    finishReason,
    ...(reasoning === undefined ? {} : { reasoning }),
    ...(finishReason === "stop" && typeof stopSequence === "string" && stopSequence !== "" ? { stopSequence } : {}),
  };
}
