import type { Message, Part } from "@a2a-js/sdk";
import { ContentTypeNotSupportedError, RequestMalformedError } from "@a2a-js/sdk/errors";
import type { FunctionCallItem } from "../../wire/responses-response.js";

// What a client's A2A message asks: the text a graph is given, the answer to a paused run's
// question, the settings it sends.

function partsOf(message: Message | undefined): Part[] {
  if (message === undefined) throw new RequestMalformedError("params.message is missing: send the message to the agent.");
  if (message.parts.length === 0) throw new RequestMalformedError("The message has no parts: send its text in a text part.");
  const other = message.parts.find((part) => part.content?.$case !== "text" && part.content?.$case !== "data");
  if (other !== undefined) {
    throw new ContentTypeNotSupportedError(
      `This agent reads text and data parts; a ${other.content?.$case ?? "empty"} part cannot be read. Send the text in a text part.`,
    );
  }
  return message.parts;
}

const json = (value: unknown): string => JSON.stringify(value) ?? "null";

/** The text a graph is given: the text parts, then any data parts as JSON. A message without text is refused. */
export function messageText(message: Message | undefined): string {
  const parts = partsOf(message);
  const texts = parts.flatMap((part) => (part.content?.$case === "text" ? [part.content.value] : []));
  if (texts.length === 0) {
    throw new ContentTypeNotSupportedError("The message has no text part, and this agent's graph reads text: add a text part.");
  }
  const data = parts.flatMap((part) => (part.content?.$case === "data" ? [json(part.content.value)] : []));
  return [...texts, ...data].join("\n");
}

/**
 * The answers to a paused run's calls, as the `function_call_output` items that resume it.
 * A data part is the answer itself (an array of one answer per question when the run asks
 * several); text is the answer to every question.
 */
export function resumeItems(message: Message | undefined, calls: readonly FunctionCallItem[]) {
  const parts = partsOf(message);
  const data = parts.find((part) => part.content?.$case === "data")?.content?.value as unknown;
  const text = parts.flatMap((part) => (part.content?.$case === "text" ? [part.content.value] : [])).join("\n");
  const spread = calls.length > 1 && Array.isArray(data) && data.length === calls.length;
  return calls.map((call, index) => ({
    type: "function_call_output" as const,
    call_id: call.call_id,
    // `{ resume: value }` hands the graph the value itself; plain text is handed as text.
    output: data === undefined ? text : json({ resume: spread ? (data as unknown[])[index] : data }),
  }));
}

/** The model's settings a client sends in the request's (or the message's) metadata, under `settings`. */
export function settingsOf(...metadata: (Record<string, unknown> | undefined)[]): Record<string, unknown> | undefined {
  for (const bag of metadata) {
    const settings = bag?.settings;
    if (settings === undefined) continue;
    if (typeof settings !== "object" || settings === null || Array.isArray(settings)) {
      throw new RequestMalformedError("metadata.settings must be an object of the model's settings (see its JSON Schema).");
    }
    return settings as Record<string, unknown>;
  }
  return undefined;
}
