import { createHash } from "node:crypto";
import type { AssistantOutput } from "../../runs/messages/message-out.js";
import type { RunStreamEvent } from "../../runs/stream-run.js";
import { randomHex } from "../../util/random-hex.js";
import type { ClientEventWire, FinishReason, UrlCitation, Usage } from "../../wire/response.js";

// A run's answer as an Anthropic Message: complete (one JSON object) or as the Messages stream
// (`message_start`, content blocks that start, grow by deltas and stop, `message_delta` with the
// stop reason and usage, `message_stop`). Reasoning is a `thinking` block, the text a `text`
// block with its citations, each tool call (a graph's pause among them) a `tool_use` block.

/** An event of the Messages stream; its `type` is also its SSE `event:` name. */
export type MessageEvent = { type: string } & Record<string, unknown>;

/** What the client asked that shapes the answer. */
export interface MessageIdentity {
  id: string;
  model: string;
  /** `thinking: {type: "disabled"}`: the graph's reasoning stays out of the answer. */
  hideThinking: boolean;
  /** `metadata.graph_stream_events: "v1"`: client events as `graph_event` frames (an SDK skips them). */
  clientEvents: boolean;
}

export function messageId(): string {
  return `msg_${randomHex()}`;
}

const STOP: Record<FinishReason, string> = { stop: "end_turn", length: "max_tokens", tool_calls: "tool_use" };

/** Why the answer ended: one of the request's `stop_sequences` (named) when the model says so. */
function stopOf(output: AssistantOutput): { stop_reason: string; stop_sequence: string | null } {
  return output.stopSequence === undefined
    ? { stop_reason: STOP[output.finishReason], stop_sequence: null }
    : { stop_reason: "stop_sequence", stop_sequence: output.stopSequence };
}

type AnthropicUsage = { input_tokens: number; output_tokens: number; cache_creation_input_tokens: number; cache_read_input_tokens: number };

function usageOf(usage: Usage | undefined): AnthropicUsage {
  return {
    input_tokens: usage?.prompt_tokens ?? 0,
    output_tokens: usage?.completion_tokens ?? 0,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: usage?.prompt_tokens_details?.cached_tokens ?? 0,
  };
}

/**
 * The signature a thinking block carries. Anthropic's is its own proof that it wrote the
 * block; this one is a digest of the text, which chat-serve never checks (thinking a client
 * sends back is not graph input).
 */
function signatureOf(thinking: string): string {
  return createHash("sha256").update(`chat-serve.thinking.v1:${thinking}`).digest("base64");
}

/** A URL citation as the location Messages gives a web search result's citation. */
function citationOf(citation: UrlCitation, text: string) {
  const { url, title, start_index: start, end_index: end, cited_text: cited } = citation.url_citation;
  return {
    type: "web_search_result_location",
    url,
    title: title === "" ? null : title,
    encrypted_index: "",
    cited_text: cited ?? text.slice(start, end),
  };
}

function toolInput(argumentsJson: string): Record<string, unknown> {
  try {
    const input: unknown = JSON.parse(argumentsJson);
    if (typeof input === "object" && input !== null && !Array.isArray(input)) return input as Record<string, unknown>;
  } catch {}
  return { arguments: argumentsJson };
}

function toolUseBlocks(output: AssistantOutput) {
  return output.toolCalls.map((call) => ({
    type: "tool_use",
    id: call.id,
    name: call.function.name,
    input: toolInput(call.function.arguments),
  }));
}

/** The complete Message of a finished run. */
export function toMessage(identity: MessageIdentity, output: AssistantOutput, usage: Usage | undefined) {
  const content: Record<string, unknown>[] = [];
  if (output.reasoning !== undefined && output.reasoning.text !== "" && !identity.hideThinking) {
    content.push({ type: "thinking", thinking: output.reasoning.text, signature: signatureOf(output.reasoning.text) });
  }
  if (output.text !== "" || output.toolCalls.length === 0) {
    const citations = output.annotations.map((citation) => citationOf(citation, output.text));
    content.push({ type: "text", text: output.text, ...(citations.length === 0 ? {} : { citations }) });
  }
  content.push(...toolUseBlocks(output));
  return {
    id: identity.id,
    type: "message",
    role: "assistant",
    model: identity.model,
    content,
    ...stopOf(output),
    usage: usageOf(usage),
  };
}

/** A client event (status, progress, artifact) as chat-serve's own `graph_event` frame. */
function graphEvent(event: ClientEventWire): MessageEvent {
  return { type: "graph_event", event };
}

/** The events of one streamed answer, built as the run goes. */
export function messageEvents(identity: MessageIdentity): {
  first: MessageEvent[];
  of(event: RunStreamEvent): MessageEvent[];
  fail(body: { type: string; message: string }): MessageEvent[];
} {
  let index = -1;
  let open: { kind: "text" | "thinking"; text: string } | undefined;
  const close = (): MessageEvent[] => {
    if (open === undefined) return [];
    const events: MessageEvent[] =
      open.kind === "thinking"
        ? [{ type: "content_block_delta", index, delta: { type: "signature_delta", signature: signatureOf(open.text) } }]
        : [];
    open = undefined;
    return [...events, { type: "content_block_stop", index }];
  };
  const grow = (kind: "text" | "thinking", piece: string): MessageEvent[] => {
    const events: MessageEvent[] = open?.kind === kind ? [] : close();
    if (open === undefined) {
      index += 1;
      open = { kind, text: "" };
      events.push({
        type: "content_block_start",
        index,
        content_block: kind === "text" ? { type: "text", text: "" } : { type: "thinking", thinking: "", signature: "" },
      });
    }
    open.text += piece;
    events.push({
      type: "content_block_delta",
      index,
      delta: kind === "text" ? { type: "text_delta", text: piece } : { type: "thinking_delta", thinking: piece },
    });
    return events;
  };
  return {
    first: [
      {
        type: "message_start",
        message: {
          id: identity.id,
          type: "message",
          role: "assistant",
          model: identity.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: usageOf(undefined),
        },
      },
      { type: "ping" },
    ],
    of(event) {
      switch (event.kind) {
        case "text":
          return grow("text", event.text);
        case "reasoning":
          return identity.hideThinking ? [] : grow("thinking", event.text);
        case "event":
          return identity.clientEvents ? [graphEvent(event.event)] : [];
        case "final": {
          const { output } = event;
          const events: MessageEvent[] = [];
          // A text block for the citations, and for an answer that said nothing at all.
          if (open?.kind !== "text" && (output.annotations.length > 0 || (index === -1 && output.toolCalls.length === 0))) {
            events.push(...grow("text", ""));
          }
          const text = open?.kind === "text" ? open.text : output.text;
          for (const citation of output.annotations) {
            events.push({ type: "content_block_delta", index, delta: { type: "citations_delta", citation: citationOf(citation, text) } });
          }
          events.push(...close());
          for (const block of toolUseBlocks(output)) {
            index += 1;
            events.push(
              { type: "content_block_start", index, content_block: { ...block, input: {} } },
              { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) } },
              { type: "content_block_stop", index },
            );
          }
          events.push({ type: "message_delta", delta: stopOf(output), usage: usageOf(event.usage) }, { type: "message_stop" });
          return events;
        }
      }
    },
    fail(body) {
      return [{ type: "error", error: body }];
    },
  };
}
