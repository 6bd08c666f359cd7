import { InvalidClientSettingsError, InvalidRequestError, InvalidResumeError } from "../../errors/catalogue.js";
import { INTERRUPT_TOOL_NAME } from "../../runs/interrupts/interrupt-codec.js";
import type { ResumeOf } from "../../runs/interrupts/interrupt-run.js";
import { markerReply } from "../../runs/interrupts/spoken-interrupts.js";
import { type ChatCompletionRequest, type ChatMessage, chatCompletionRequestSchema } from "../../wire/request.js";
import { parseChatRequest } from "../chat/parse-chat-request.js";
import { withoutThinking } from "./conversation.js";
import { taskReply } from "./task-reply.js";

/** The body field and header that carry client settings where `metadata` cannot (chat UIs drop it). */
const SETTINGS_FIELD = "graph_runtime_settings";
const SETTINGS_HEADER = "x-graph-runtime-settings";
/** Open WebUI's chat ID, sent with `ENABLE_FORWARD_USER_INFO_HEADERS`: the conversation for tracing. */
const CHAT_ID_HEADER = "x-openwebui-chat-id";

const KNOWN_FIELDS = new Set(Object.keys(chatCompletionRequestSchema.shape));

/** What the `chat-ui` profile makes of a request. */
export interface ChatUiRequest {
  /** The request the run engine sees. */
  request: ChatCompletionRequest;
  /** The person's reply to a paused run, found by the marker in the last assistant message. */
  resumeOf?: ResumeOf;
  /** A chat UI's own task (a title, tags, follow-ups), answered without running the graph. */
  fixedAnswer?: string;
}

function textOf(message: ChatMessage | undefined): string {
  const content = (message as { content?: unknown } | undefined)?.content;
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((part) => (part as { text?: unknown }).text ?? "").join("");
  return "";
}

function settingsText(body: Record<string, unknown>, header: string | string[] | undefined): string | undefined {
  const field = body[SETTINGS_FIELD];
  if (field !== undefined && field !== null) {
    if (typeof field === "string") return field;
    if (typeof field === "object") return JSON.stringify(field);
    throw new InvalidClientSettingsError(`'${SETTINGS_FIELD}' must be an object or a JSON string.`);
  }
  return typeof header === "string" && header.trim() !== "" ? header : undefined;
}

/**
 * A chat UI's request as the run engine's: unknown top-level fields are dropped (UIs add
 * their own), client settings come from the `graph_runtime_settings` body field or header,
 * the conversation from Open WebUI's chat-ID header, client events are on for streams, and a
 * reply after a marker resumes the paused run. Tool messages answering `graph_interrupt`
 * calls are refused: a UI that auto-answers tools must never resume a run.
 */
export function parseChatUiRequest(
  body: unknown,
  headers: Record<string, string | string[] | undefined>,
  answerTasks: boolean,
): ChatUiRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw new InvalidRequestError("The request body must be a JSON object.");
  const raw = body as Record<string, unknown>;
  const settings = settingsText(raw, headers[SETTINGS_HEADER]);
  const known = Object.fromEntries(Object.entries(raw).filter(([key]) => KNOWN_FIELDS.has(key)));
  const parsed = parseChatRequest(known);
  // Earlier answers come back with the thinking block the UI was shown; the graph gets what was said.
  const request = {
    ...parsed,
    messages: parsed.messages.map((message) =>
      message.role === "assistant" && typeof message.content === "string"
        ? { ...message, content: withoutThinking(message.content) }
        : message,
    ),
  };
  const interruptAnswer = request.messages.some(
    (message) => message.role === "assistant" && (message.tool_calls ?? []).some((call) => call.function.name === INTERRUPT_TOOL_NAME),
  );
  if (interruptAnswer) {
    throw new InvalidResumeError(
      "In this chat, a question from the graph is answered by writing the answer as your next message, not by a tool; nothing was resumed.",
    );
  }
  const metadata = { ...request.metadata };
  if (settings !== undefined) metadata.graph_runtime_settings = settings;
  const chatId = headers[CHAT_ID_HEADER];
  if (metadata.session_id === undefined && typeof chatId === "string" && chatId !== "") metadata.session_id = chatId.slice(0, 512);
  if (request.stream === true && metadata.graph_stream_events === undefined) metadata.graph_stream_events = "v1";
  const engineRequest: ChatCompletionRequest = { ...request, metadata };

  const last = request.messages.at(-1);
  if (answerTasks && last?.role === "user") {
    const fixed = taskReply(textOf(last));
    if (fixed !== undefined) return { request: engineRequest, fixedAnswer: fixed };
  }
  const reply = markerReply(request.messages);
  if (reply !== undefined) return { request: engineRequest, resumeOf: reply };
  return { request: engineRequest };
}
