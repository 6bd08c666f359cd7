import { InvalidRequestError } from "../../errors/catalogue.js";
import { INTERRUPT_TOOL_NAME } from "../../runs/interrupts/interrupt-codec.js";
import { randomHex } from "../../util/random-hex.js";
import type { InputItem } from "../../wire/responses-request.js";
import type { CompactionItem } from "../../wire/responses-response.js";

// `POST /responses/compact`, done without a model: the conversation's own words are kept (the
// system, developer and user messages), and what the assistant said and did (its answers, its
// tool calls and their results, an earlier compaction) becomes one `compaction` item holding an
// excerpt of each, in order. A later request that sends the compacted input back gets that item
// as a system message with the excerpts. The item's `encrypted_content` is not encrypted: it is
// chat-serve's own encoding of text the client sent or received, opaque only by convention.

/** How much of one answer, tool result or call's arguments the compaction keeps. */
const ANSWER_CHARS = 600;
const RESULT_CHARS = 400;
const ARGUMENT_CHARS = 200;

const PREFIX = "chat-serve.compaction.v1.";

type Compaction = Extract<InputItem, { type: "compaction" }>;
type Message = Extract<InputItem, { role: string }>;

/** The text of a message's or a tool result's content. */
function plainText(content: string | readonly { type: string; text?: string; refusal?: string }[]): string {
  if (typeof content === "string") return content;
  return content.map((part) => part.text ?? part.refusal ?? "").join("");
}

function excerpt(text: string, limit: number): string {
  const flat = text.replace(/\s+/gu, " ").trim();
  return flat.length <= limit ? flat : `${flat.slice(0, limit)}… (${flat.length - limit} more characters)`;
}

/** A compaction item's summary, as the client got it; a 400 for one chat-serve did not make. */
export function compactionSummary(item: Compaction, at: string): string {
  if (!item.encrypted_content.startsWith(PREFIX)) {
    throw new InvalidRequestError(`${at}: this compaction item was not made by this server's /responses/compact, so it cannot be read.`, {
      param: `${at}.encrypted_content`,
    });
  }
  return Buffer.from(item.encrypted_content.slice(PREFIX.length), "base64url").toString("utf8");
}

/** The system message a compaction item stands for in a run's input. */
export function compactionMessage(summary: string): string {
  return `Summary of the earlier part of this conversation (compacted: the assistant's answers and tool results, shortened):\n${summary}`;
}

function isMessage(item: InputItem): item is Message {
  return "role" in item;
}

/**
 * A conversation's items compacted: its system, developer and user messages as they were, then
 * one compaction item with an excerpt of everything else, in order. Reasoning is left out, and
 * so are a paused run's `graph_interrupt` calls and their answers.
 */
export function compactItems(items: readonly InputItem[]): InputItem[] {
  const kept: InputItem[] = [];
  const lines: string[] = [];
  const names = new Map<string, string>();
  const interrupts = new Set<string>();
  items.forEach((item, index) => {
    if (isMessage(item)) {
      if (item.role === "assistant") {
        const text = plainText(item.content);
        if (text.trim() !== "") lines.push(`- The assistant answered: ${excerpt(text, ANSWER_CHARS)}`);
      } else {
        kept.push(item);
      }
      return;
    }
    switch (item.type) {
      case "function_call":
        if (item.name === INTERRUPT_TOOL_NAME) {
          interrupts.add(item.call_id);
          return;
        }
        names.set(item.call_id, item.name);
        lines.push(`- The assistant called ${item.name}(${excerpt(item.arguments, ARGUMENT_CHARS)})`);
        return;
      case "function_call_output": {
        if (interrupts.has(item.call_id)) return;
        const output = typeof item.output === "string" ? item.output : plainText(item.output);
        lines.push(`- ${names.get(item.call_id) ?? "A tool"} returned: ${excerpt(output, RESULT_CHARS)}`);
        return;
      }
      case "compaction":
        lines.push(compactionSummary(item, `input.${index}`));
        return;
      default:
        // Reasoning, and item references (refused when the items run).
        return;
    }
  });
  if (lines.length === 0) return kept;
  return [...kept, { type: "compaction", encrypted_content: encode(lines.join("\n")) }];
}

function encode(summary: string): string {
  return `${PREFIX}${Buffer.from(summary, "utf8").toString("base64url")}`;
}

/**
 * The one `compaction` output item that answers a `compaction_trigger` (Codex's remote
 * compaction): the same excerpt `compactItems` makes, for a client that keeps the
 * conversation's own messages itself and puts this item after them.
 */
export function compactionOutput(items: readonly InputItem[]): CompactionItem {
  const compacted = compactItems(items).at(-1);
  const content = compacted?.type === "compaction" ? compacted.encrypted_content : encode("- Nothing was said or done yet.");
  return { type: "compaction", id: `cmp_${randomHex()}`, encrypted_content: content, created_by: "chat-serve" };
}
