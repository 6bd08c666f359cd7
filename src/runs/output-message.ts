import type { BaseMessage } from "@langchain/core/messages";
import { GraphConfigurationError } from "../errors/catalogue.js";
import { CitationIndexError } from "../errors/developer-errors.js";
import { isChatServeError } from "../errors/serve-error.js";
import type { GraphConfig } from "../registry/graph-config.js";
import { type AssistantOutput, toAssistantOutput } from "./messages/message-out.js";

function isMessage(value: unknown): value is BaseMessage {
  return typeof value === "object" && value !== null && typeof (value as BaseMessage).type === "string" && "content" in value;
}

/**
 * The assistant message a run answers with: the graph's `outputToMessage`, or else the last
 * message of `output.messages`, which must be an AI message.
 */
async function outputToMessage(model: string, config: GraphConfig, output: unknown): Promise<BaseMessage> {
  if (config.outputToMessage !== undefined) {
    const message = await config.outputToMessage(output);
    if (!isMessage(message)) {
      throw new GraphConfigurationError(`outputToMessage of model '${model}' must return a LangChain message.`);
    }
    return message;
  }
  const messages = (output as { messages?: unknown } | null | undefined)?.messages;
  const last = Array.isArray(messages) ? messages.at(-1) : undefined;
  if (!isMessage(last)) {
    throw new GraphConfigurationError(
      `The output of model '${model}' has no 'messages' list; return messages from the graph or set outputToMessage.`,
    );
  }
  if (last.type !== "ai") {
    throw new GraphConfigurationError(
      `The last message in the output of model '${model}' is a '${last.type}' message, not an AI message; end the graph with an assistant reply or set outputToMessage.`,
    );
  }
  return last;
}

/** The assistant turn a run answers with; a graph's bad citation is this request's server error. */
export async function finalOutput(model: string, config: GraphConfig, output: unknown): Promise<AssistantOutput> {
  const message = await outputToMessage(model, config, output);
  try {
    return toAssistantOutput(message, config.reasoning);
  } catch (error) {
    if (isChatServeError(error, CitationIndexError)) {
      throw new GraphConfigurationError(`Model '${model}' returned an invalid citation: ${error.message}.`, { cause: error });
    }
    throw error;
  }
}
