import { randomUUID } from "node:crypto";
import type { RunStreamEvent } from "../../runs/stream-run.js";
import { randomHex } from "../../util/random-hex.js";
import type { ClientEventWire, FinishReason, Usage } from "../../wire/response.js";

// A run's events as the AI SDK's UI message stream (`x-vercel-ai-ui-message-stream: v1`):
// one assistant message per request, its text and reasoning as parts that open, grow and
// close, client events as `data-*` parts, citations as `source-url` parts, tool calls (the
// graph's pauses among them) as tool parts the page answers, the model and usage in the
// message's metadata.

/** A chunk of the UI message stream (the AI SDK's `UIMessageChunk`, the kinds this server sends). */
export type UiChunk = { type: string } & Record<string, unknown>;

const FINISH: Record<FinishReason, string> = { stop: "stop", length: "length", tool_calls: "tool-calls" };

/** The message's metadata: which model answered, and what it cost when the graph's models said. */
export interface UiMessageMetadata {
  model: string;
  usage?: { inputTokens: number; outputTokens: number; totalTokens: number; reasoningTokens?: number };
}

function usageOf(usage: Usage): NonNullable<UiMessageMetadata["usage"]> {
  const reasoning = usage.completion_tokens_details?.reasoning_tokens;
  return {
    inputTokens: usage.prompt_tokens,
    outputTokens: usage.completion_tokens,
    totalTokens: usage.total_tokens,
    ...(reasoning === undefined ? {} : { reasoningTokens: reasoning }),
  };
}

/**
 * A client event as a data part: `data-status`, `data-progress` or `data-artifact`. Status
 * and progress keep one part per graph namespace (a newer one replaces it, by its `id`); each
 * artifact is a part of its own.
 */
function dataPart(event: ClientEventWire): UiChunk {
  const where = event.namespace.join("/") || "root";
  const id =
    event.type === "artifact" ? `artifact:${typeof event.data.id === "string" ? event.data.id : randomUUID()}` : `${event.type}:${where}`;
  return { type: `data-${event.type}`, id, data: { ...event.data, namespace: event.namespace } };
}

/**
 * The chunks of one answer, built as the run goes. `continues`: the assistant message a
 * continuation goes on (useChat sends one after a tool's output or an approval): its `start`
 * names that message, so the page adds to it rather than showing a second one.
 */
export function uiChunks(
  model: string,
  continues?: string,
): {
  first: UiChunk[];
  of(event: RunStreamEvent): UiChunk[];
  fail(error: unknown, text: string): UiChunk[];
} {
  const messageId = continues ?? `msg_${randomHex()}`;
  let text: string | undefined;
  let reasoning: string | undefined;
  const close = (): UiChunk[] => {
    const closing: UiChunk[] = [];
    if (reasoning !== undefined) closing.push({ type: "reasoning-end", id: reasoning });
    if (text !== undefined) closing.push({ type: "text-end", id: text });
    reasoning = undefined;
    text = undefined;
    return closing;
  };
  return {
    first: [{ type: "start", messageId, messageMetadata: { model } satisfies UiMessageMetadata }, { type: "start-step" }],
    of(event) {
      switch (event.kind) {
        case "text": {
          const chunks: UiChunk[] = [];
          if (reasoning !== undefined) {
            chunks.push({ type: "reasoning-end", id: reasoning });
            reasoning = undefined;
          }
          if (text === undefined) {
            text = `text_${randomUUID().slice(0, 8)}`;
            chunks.push({ type: "text-start", id: text });
          }
          chunks.push({ type: "text-delta", id: text, delta: event.text });
          return chunks;
        }
        case "reasoning": {
          const chunks: UiChunk[] = [];
          if (reasoning === undefined) {
            reasoning = `reasoning_${randomUUID().slice(0, 8)}`;
            chunks.push({ type: "reasoning-start", id: reasoning });
          }
          chunks.push({ type: "reasoning-delta", id: reasoning, delta: event.text });
          return chunks;
        }
        case "event":
          return [dataPart(event.event)];
        case "final": {
          const { output, usage } = event;
          const chunks: UiChunk[] = close();
          for (const [index, citation] of output.annotations.entries()) {
            const { url, title } = citation.url_citation;
            chunks.push({ type: "source-url", sourceId: `source_${index + 1}`, url, ...(title === "" ? {} : { title }) });
          }
          for (const call of output.toolCalls) {
            let input: unknown = call.function.arguments;
            try {
              input = JSON.parse(call.function.arguments);
            } catch {}
            chunks.push({ type: "tool-input-available", toolCallId: call.id, toolName: call.function.name, input });
          }
          chunks.push({ type: "finish-step" });
          const metadata: UiMessageMetadata = { model, ...(usage === undefined ? {} : { usage: usageOf(usage) }) };
          chunks.push({ type: "finish", finishReason: FINISH[output.finishReason], messageMetadata: metadata });
          return chunks;
        }
      }
    },
    fail(_error, message) {
      return [...close(), { type: "error", errorText: message }];
    },
  };
}
