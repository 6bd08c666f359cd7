import type OpenAI from "openai";

type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type ToolCall = OpenAI.Chat.Completions.ChatCompletionMessageToolCall;

/**
 * The conversation that answers a batch of graph_interrupt calls: the history, the assistant
 * message with the calls, then one tool message per call whose content is `answer` (the same
 * text for every call, or one per call).
 */
export function answerBatch(
  history: Message[],
  calls: ToolCall[],
  answer: string | ((call: ToolCall, index: number) => string),
): Message[] {
  return [
    ...history,
    { role: "assistant", content: null, tool_calls: calls },
    ...calls.map(
      (call, index): Message => ({
        role: "tool",
        tool_call_id: call.id,
        content: typeof answer === "string" ? answer : answer(call, index),
      }),
    ),
  ];
}
