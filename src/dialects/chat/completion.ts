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
  const completion: ChatCompletion = {
    ...identity,
    object: "chat.completion",
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: output.text === "" && hasToolCalls ? null : output.text,
          ...(output.reasoning === undefined ? {} : { reasoning_content: output.reasoning.text, reasoning: output.reasoning.text }),
          refusal: null,
          ...(hasToolCalls ? { tool_calls: output.toolCalls } : {}),
          annotations: output.annotations,
        },
        finish_reason: output.finishReason,
        logprobs: null,
      },
    ],
  };
  if (usage !== undefined) completion.usage = usage;
  return completion;
}
