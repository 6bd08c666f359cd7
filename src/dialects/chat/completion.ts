import type { AssistantOutput } from "../../runs/messages/message-out.js";
import type { ChatCompletion, Usage } from "../../wire/response.js";

/** What every chunk or completion of one response shares. */
export interface CompletionIdentity {
  id: string;
  created: number;
  model: string;
}

/** A complete `chat.completion` body. Content is null only for a turn of tool calls alone. */
export function toChatCompletion(identity: CompletionIdentity, output: AssistantOutput, usage: Usage | undefined): ChatCompletion {
  const hasToolCalls = output.toolCalls.length > 0;
  // Built key by key in the wire's order (no spreads of optional parts): every complete answer passes here.
  const message = {
    role: "assistant",
    content: output.text === "" && hasToolCalls ? null : output.text,
  } as ChatCompletion["choices"][number]["message"];
  if (output.reasoning !== undefined) {
    message.reasoning_content = output.reasoning.text;
    message.reasoning = output.reasoning.text;
  }
  message.refusal = null;
  if (hasToolCalls) message.tool_calls = output.toolCalls;
  message.annotations = output.annotations;
  const completion: ChatCompletion = {
    id: identity.id,
    created: identity.created,
    model: identity.model,
    object: "chat.completion",
    choices: [{ index: 0, message, finish_reason: output.finishReason, logprobs: null }],
  };
  if (usage !== undefined) completion.usage = usage;
  return completion;
}
