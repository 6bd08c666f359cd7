import { spokenBatch } from "../../runs/interrupts/spoken-interrupts.js";
import type { AssistantOutput } from "../../runs/messages/message-out.js";
import type { RunStreamEvent } from "../../runs/stream-run.js";
import type { ChatCompletionChunk } from "../../wire/response.js";

const THINK_OPEN = "<think>\n";
const THINK_CLOSE = "\n</think>\n\n";

/**
 * Reasoning as chat UIs show it: a `<think>` block before the answer, which Open WebUI (and
 * LobeChat, LibreChat) render as a collapsible "thinking" section, streamed or not.
 */
export function withThinking(output: AssistantOutput): AssistantOutput {
  const { reasoning, ...rest } = output;
  if (reasoning === undefined) return output;
  return { ...rest, text: `${THINK_OPEN}${reasoning.text}${THINK_CLOSE}${output.text}` };
}

/** A `<think>` block a chat UI sends back in an earlier answer: not part of what was said. */
const THINK_BLOCK = /^\s*<think>[\s\S]*?<\/think>\s*/u;

/** An earlier answer's text without the thinking the UI showed before it. */
export function withoutThinking(text: string): string {
  return text.replace(THINK_BLOCK, "");
}

/**
 * The run's events as chat UIs read them: reasoning streamed inside a `<think>` block of the
 * text, and a paused run's batch turned into conversation (the new text streamed first).
 */
export async function* conversationEvents(events: AsyncIterable<RunStreamEvent>): AsyncGenerator<RunStreamEvent> {
  let thinking = false;
  let shownReasoning = "";
  for await (const event of events) {
    if (event.kind === "reasoning") {
      yield { kind: "text", text: `${thinking ? "" : THINK_OPEN}${event.text}` };
      thinking = true;
      shownReasoning += event.text;
      continue;
    }
    if (thinking && (event.kind === "text" || event.kind === "final")) {
      yield { kind: "text", text: THINK_CLOSE };
      thinking = false;
    }
    if (event.kind !== "final") {
      yield event;
      continue;
    }
    // The final text is the streamed text: the thinking block as the stream showed it, then the answer.
    const shown =
      shownReasoning === "" ? event.output : { ...event.output, text: `${THINK_OPEN}${shownReasoning}${THINK_CLOSE}${event.output.text}` };
    const { reasoning: _reasoning, ...plain } = shown;
    const output = spokenBatch(plain);
    if (output !== plain && output.text.length > plain.text.length) {
      yield { kind: "text", text: output.text.slice(plain.text.length) };
    }
    yield { ...event, output };
  }
}

/** A fixed answer, as the run events of an answer that streams it at once. */
export async function* fixedAnswer(text: string): AsyncGenerator<RunStreamEvent> {
  yield { kind: "text", text };
  yield { kind: "final", output: { text, toolCalls: [], annotations: [], finishReason: "stop" }, usage: undefined };
}

/**
 * A chunk as a chat UI reads it: a client event becomes the UI's own `event` object
 * (`{type: "status", data: {description, done, hidden}}`); progress and artifacts become
 * status lines. Every other chunk is unchanged.
 */
export function uiChunk(chunk: ChatCompletionChunk): ChatCompletionChunk {
  const event = chunk.graph_chat_serve?.event;
  if (event === undefined) return chunk;
  const { graph_chat_serve: _extension, ...plain } = chunk;
  const data = event.data;
  let description: string;
  if (event.type === "status") {
    description = String(data.description ?? "");
    return { ...plain, event: { type: "status", data: { description, done: data.done === true, hidden: data.hidden === true } } };
  }
  if (event.type === "progress") {
    const count = typeof data.total === "number" ? ` (${data.completed ?? 0}/${data.total})` : "";
    description = `${String(data.message ?? data.stage ?? "Working")}${count}`;
  } else {
    const name = String(data.title ?? data.id ?? "artifact");
    description = typeof data.url === "string" ? `${name}: ${data.url}` : name;
  }
  return { ...plain, event: { type: "status", data: { description, done: false, hidden: false } } };
}
