import type { BaseMessage } from "@langchain/core/messages";
import { messageText } from "../translate/message-text.js";
import type { ClientEventWire } from "../wire/response.js";
import type { RunResult } from "./invoke-run.js";
import { finalOutput } from "./output-message.js";
import { readCustomPart } from "../events/validate-event.js";
import type { PreparedRun } from "./prepare-run.js";

/** What a streamed run yields, in graph order. */
export type RunStreamEvent =
  | { kind: "text"; text: string }
  | { kind: "event"; event: ClientEventWire }
  | ({ kind: "final" } & RunResult);

// LangGraph's tags for model calls that must not reach a client's stream.
const HIDDEN_TAGS = new Set(["langsmith:nostream", "langsmith:hidden", "nostream"]);

interface MessageMetadata {
  langgraph_node?: string;
  tags?: string[];
}

function isStreamedAssistantText(run: PreparedRun, message: BaseMessage, metadata: MessageMetadata): boolean {
  if (message.type !== "ai") return false;
  if (metadata.langgraph_node === undefined || !run.config.streamableNodeNames.includes(metadata.langgraph_node)) {
    return false;
  }
  return !(metadata.tags ?? []).some((tag) => HIDDEN_TAGS.has(tag));
}

/**
 * Streams one run: assistant text from the streamable nodes as it is produced, then the
 * final assistant turn. Whatever part of the final text no streamable node produced is sent
 * as one more text event, so a stream always carries the complete response's text.
 */
export async function* streamRun(run: PreparedRun): AsyncGenerator<RunStreamEvent> {
  const stream = await run.graph.stream(run.input, {
    ...run.runConfig,
    streamMode: ["messages", "custom", "values"],
    subgraphs: true,
  });
  let streamedText = "";
  let finalState: unknown;
  let loggedInvalidEvent = false;
  for await (const part of stream) {
    const [namespace, mode, data] = part as [string[], string, unknown];
    if (mode === "values") {
      if (namespace.length === 0) finalState = data;
    } else if (mode === "messages") {
      const [message, metadata] = data as [BaseMessage, MessageMetadata];
      if (!isStreamedAssistantText(run, message, metadata)) continue;
      const text = messageText(message);
      if (text === "") continue;
      streamedText += text;
      yield { kind: "text", text };
    } else if (mode === "custom" && run.clientEvents) {
      const part = readCustomPart(data);
      if (part.kind === "event") {
        yield { kind: "event", event: part.event };
      } else if (part.kind === "invalid" && !loggedInvalidEvent) {
        // Once per run: a graph that emits a bad event usually emits many.
        loggedInvalidEvent = true;
        run.log?.warn({ model: run.model, reason: part.reason }, "dropped an invalid client event");
      }
    }
  }
  const output = await finalOutput(run.model, run.config, finalState);
  if (output.text.startsWith(streamedText) && output.text.length > streamedText.length) {
    yield { kind: "text", text: output.text.slice(streamedText.length) };
  }
  yield { kind: "final", output, usage: run.usage.usage() };
}
