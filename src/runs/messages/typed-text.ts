import type { BaseMessage } from "@langchain/core/messages";
import { messageText } from "./message-text.js";

/**
 * The context blocks coding agents put in the user's turn beside what the person typed: Claude
 * Code's `<system-reminder>`, Cline's and Kilo Code's `<environment_details>`, Codex's
 * `<environment_context>` and `<user_instructions>`.
 */
const CLIENT_NOTES = /<(system-reminder|environment_details|environment_context|user_instructions)>[\s\S]*?<\/\1>/gu;

/** Text without the context blocks an app added to it, trimmed. */
export function withoutClientNotes(text: string): string {
  return text.replace(CLIENT_NOTES, "").trim();
}

/**
 * What the person typed in a message: its text without the context blocks coding agents add to
 * the user's turn (`<system-reminder>`, `<environment_details>`, …), trimmed. For a graph that
 * repeats or reads the person's words: `typedText(state.messages.at(-1))`.
 */
export function typedText(message: Pick<BaseMessage, "content"> | undefined): string {
  return message === undefined ? "" : withoutClientNotes(messageText(message));
}
