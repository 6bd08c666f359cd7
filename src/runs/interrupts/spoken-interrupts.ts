import type { ChatMessage } from "../../wire/request.js";
import type { AssistantOutput } from "../messages/message-out.js";
import { withoutClientNotes } from "../messages/typed-text.js";
import { decodeBatch, INTERRUPT_TOOL_NAME } from "./interrupt-codec.js";
import { questionText } from "./interrupt-question.js";

// A paused run told as conversation, for clients with no `graph_interrupt` tool (chat UIs, Claude
// Code, Codex): the graph's questions are the answer's text, ending in a marker that names the
// run and its batch, and the person's next message is the answer. The marker is what makes it
// work without any server-side session: every such client sends its history back, and the
// marker with it.

/**
 * `graph_interrupt:<run id>:<state token>` in inline code on the message's last line: plain
 * ASCII with no tags, so it survives a client that strips whitespace, splits off tags, renders
 * Markdown and sends its history back verbatim.
 */
const MARKER = /graph_interrupt:([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}):([0-9a-f]{32})/iu;

function resumeMarker(runId: string, stateToken: string): string {
  return `\`graph_interrupt:${runId}:${stateToken}\``;
}

/** The run and batch a message's text points at, if it carries a marker. */
function readMarker(text: string): { runId: string; stateToken: string } | undefined {
  const match = MARKER.exec(text);
  return match === null ? undefined : { runId: match[1]!.toLowerCase(), stateToken: match[2]!.toLowerCase() };
}

/**
 * Whether a request's client is told a pause in text: it offers tools of its own (a coding agent
 * does, on every request) and none of them is `graph_interrupt`. A client that offers no tools
 * (the SDK examples) or lists `graph_interrupt` gets the pause as tool calls.
 */
export function asksInText(offeredTools: readonly string[]): boolean {
  return offeredTools.length > 0 && !offeredTools.includes(INTERRUPT_TOOL_NAME);
}

/** What a person reads for one interrupt: its `question` or `message`, or the payload as JSON. */
function questionOf(payload: unknown): string {
  return questionText(payload, (value) => `\`\`\`json\n${JSON.stringify(value, null, 2)}\n\`\`\``);
}

/**
 * A paused run as conversation: its questions as text (numbered when there are several) after
 * what the graph said before it paused, then the marker, `finish_reason: "stop"`. Any other
 * output is left as it is.
 */
export function spokenBatch(output: AssistantOutput): AssistantOutput {
  const args = decodeBatch(output.toolCalls);
  if (args === undefined) return output;
  const questions =
    args.length === 1
      ? questionOf(args[0]!.payload)
      : `${args.map((arg, index) => `${index + 1}. ${questionOf(arg.payload)}`).join("\n")}\n\nAnswer each on its own line, numbered like the questions.`;
  const prefix = output.text.trim() === "" ? "" : `${output.text.trimEnd()}\n\n`;
  const text = `${prefix}${questions}\n\n${resumeMarker(args[0]!.run_id, args[0]!.state_token)}`;
  return { text, toolCalls: [], annotations: output.annotations, finishReason: "stop" };
}

// How the clients that have no `graph_interrupt` tool answer a call of it: Anthropic's
// `is_error` result (read as `{"error": …}`), Claude Code's `<tool_use_error>` text, Codex's
// "unsupported call", and the AI SDK's errors that Kilo Code and opencode send back as the
// result ("Model tried to call unavailable tool …", "The arguments provided to the tool are
// invalid …", "Invalid input for tool …").
const TOOL_ERROR =
  /^\s*(<tool_use_error>|(error:\s*)?no such tool available|unsupported call|tool .{1,80} not found|model tried to call unavailable tool|the arguments provided to the tool are invalid|invalid input for tool)/iu;

/** Whether an answer to a `graph_interrupt` call is the client's error rather than a person's answer. */
export function isToolError(value: unknown): boolean {
  if (typeof value !== "string") return false;
  if (TOOL_ERROR.test(value)) return true;
  try {
    const parsed: unknown = JSON.parse(value);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) && Object.keys(parsed).join() === "error";
  } catch {
    return false;
  }
}

function typedText(message: ChatMessage): string {
  const { content } = message as { content?: unknown };
  const text =
    typeof content === "string"
      ? content
      : Array.isArray(content)
        ? content
            .flatMap((part: { type?: unknown; text?: unknown }) =>
              part.type === "text" && typeof part.text === "string" ? [part.text] : [],
            )
            .join("\n")
        : "";
  // Coding agents add their own notes to a user turn, in tags: not what the person wrote.
  return withoutClientNotes(text);
}

/**
 * The person's reply to a question told in text: the last user message, after an assistant
 * message whose text carries the marker, with only system and user messages between (a
 * client's notes). Undefined for any other conversation.
 */
export function markerReply(messages: readonly ChatMessage[]): { runId: string; stateToken: string; reply: string } | undefined {
  const last = messages.at(-1);
  if (last?.role !== "user") return undefined;
  let index = messages.length - 2;
  while (index >= 0 && (messages[index]!.role === "user" || messages[index]!.role === "system" || messages[index]!.role === "developer")) {
    index -= 1;
  }
  const assistant = messages[index];
  if (assistant?.role !== "assistant" || (assistant.tool_calls?.length ?? 0) > 0) return undefined;
  const marker = readMarker(typedText(assistant));
  return marker === undefined ? undefined : { ...marker, reply: typedText(last) };
}
