import { INTERRUPT_TOOL_NAME } from "../../runs/interrupts/interrupt-codec.js";
import type { StoredItem } from "../../store/conversation-store.js";
import { randomHex } from "../../util/random-hex.js";
import { type InputContentPart, type InputItem, inputItemSchema } from "../../wire/responses-request.js";

function newId(prefix: "msg" | "fc" | "fco" | "cmp"): string {
  return `${prefix}_${randomHex()}`;
}

function contentParts(content: string | InputContentPart[], role: string): Record<string, unknown>[] {
  if (typeof content !== "string") {
    return content.map((part) =>
      part.type === "output_text" ? { type: "output_text", text: part.text, annotations: [], logprobs: [] } : { ...part },
    );
  }
  return [
    role === "assistant" ? { type: "output_text", text: content, annotations: [], logprobs: [] } : { type: "input_text", text: content },
  ];
}

/**
 * Input items as the Responses and Conversations APIs list them: each with an id of its own
 * and `status: "completed"`, a message's string content as one text part.
 */
export function toStoredItems(items: InputItem[]): StoredItem[] {
  return items.flatMap((item): StoredItem[] => {
    if (item.type === "item_reference" || item.type === "reasoning" || item.type === "compaction_trigger") return [];
    if (item.type === "compaction") return [{ type: "compaction", id: item.id ?? newId("cmp"), encrypted_content: item.encrypted_content }];
    if (item.type === "function_call") {
      return [
        { type: "function_call", id: newId("fc"), call_id: item.call_id, name: item.name, arguments: item.arguments, status: "completed" },
      ];
    }
    if (item.type === "function_call_output") {
      return [{ type: "function_call_output", id: newId("fco"), call_id: item.call_id, output: item.output, status: "completed" }];
    }
    return [{ type: "message", id: newId("msg"), role: item.role, content: contentParts(item.content, item.role), status: "completed" }];
  });
}

/**
 * Stored items as the input of a later turn: messages, function calls and their outputs, in
 * order. Reasoning is left out (a model's reasoning is not its input), and so are the
 * `graph_interrupt` calls of a paused run and their answers: they belong to the interrupt
 * protocol, not to the conversation.
 */
export function historyItems(stored: readonly StoredItem[]): InputItem[] {
  const interruptCalls = new Set(
    stored.filter((item) => item.type === "function_call" && item.name === INTERRUPT_TOOL_NAME).map((item) => String(item.call_id)),
  );
  return stored.flatMap((item) => {
    if (item.type === "compaction") return [{ type: "compaction", encrypted_content: String(item.encrypted_content) }];
    if (item.type !== "message" && item.type !== "function_call" && item.type !== "function_call_output") return [];
    if (item.type !== "message" && interruptCalls.has(String(item.call_id))) return [];
    // A commentary message (a status the graph reported) was said along the way, not answered.
    if (item.type === "message" && item.phase === "commentary") return [];
    const parsed = inputItemSchema.safeParse(item);
    return parsed.success ? [parsed.data] : [];
  });
}
