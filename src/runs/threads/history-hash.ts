import { createHash } from "node:crypto";
import type { ChatMessage } from "../../wire/request.js";
import type { AssistantOutput } from "../messages/message-out.js";

/** The part of a message that decides whether two histories agree: role, text and tool calls. */
function canonical(message: ChatMessage): unknown {
  const text = (content: unknown): string => {
    if (typeof content === "string") return content.trim();
    if (!Array.isArray(content)) return "";
    return content
      .map((part: { type?: string; text?: string; refusal?: string; image_url?: { url?: string } }) =>
        part.type === "image_url" ? `[image ${part.image_url?.url ?? ""}]` : (part.text ?? part.refusal ?? ""),
      )
      .join("")
      .trim();
  };
  switch (message.role) {
    case "assistant":
      return [
        "assistant",
        text(message.content),
        (message.tool_calls ?? []).map((call) => [call.id, call.function.name, call.function.arguments]),
      ];
    case "tool":
      return ["tool", message.tool_call_id, text(message.content)];
    case "developer":
      // The two names of the system role are one role.
      return ["system", text(message.content)];
    default:
      return [message.role, text(message.content)];
  }
}

function extend(previous: string, message: ChatMessage): string {
  return createHash("sha256")
    .update(previous)
    .update(JSON.stringify(canonical(message)))
    .digest("hex");
}

const EMPTY = createHash("sha256").update("chat-serve.history.v1").digest("hex");

/**
 * The hash of every prefix of a history: `hashes[i]` is that of the first `i` messages (so
 * `hashes[0]` is the empty history's). Two histories agree up to `i` when their `hashes[i]` do.
 */
export function historyHashes(messages: readonly ChatMessage[]): string[] {
  const hashes = [EMPTY];
  for (const message of messages) hashes.push(extend(hashes.at(-1)!, message));
  return hashes;
}

/** The hash of a history followed by the answer a run gave, as the client will send it back. */
export function hashWithAnswer(previous: string, output: AssistantOutput): string {
  return extend(previous, {
    role: "assistant",
    content: output.text,
    ...(output.toolCalls.length === 0 ? {} : { tool_calls: output.toolCalls }),
  });
}
