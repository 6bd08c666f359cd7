import type { AssistantOutput } from "../../runs/messages/message-out.js";
import { randomHex } from "../../util/random-hex.js";
import type { Usage } from "../../wire/response.js";
import type { OutputTextPart, ResponseStreamEvent, ResponsesUsage, UrlCitationOut } from "../../wire/responses-response.js";

// The small pieces a Responses response is built from: item ids, usage, citations, events.

export function itemId(prefix: "msg" | "fc" | "rs"): string {
  return `${prefix}_${randomHex()}`;
}

/** Provider-reported usage in the Responses shape (every detail the schema requires, zero when unreported). */
export function responsesUsage(usage: Usage): ResponsesUsage {
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0, cache_write_tokens: 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: usage.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: usage.total_tokens,
  };
}

export function annotationsOf(output: AssistantOutput): UrlCitationOut[] {
  return output.annotations.map(({ url_citation: citation }) => ({
    type: "url_citation",
    url: citation.url,
    title: citation.title,
    start_index: citation.start_index,
    end_index: citation.end_index,
  }));
}

export const emptyText = (): OutputTextPart => ({ type: "output_text", text: "", annotations: [], logprobs: [] });

/** A stream event: its type and number first, then its fields. */
export function streamEvent(type: string, sequence: number, fields: Record<string, unknown>): ResponseStreamEvent {
  return { type, sequence_number: sequence, ...fields };
}

/** The fields of a text delta into the answer's one text part. */
export function textDeltaFields(itemId: string, index: number, delta: string): Record<string, unknown> {
  return { item_id: itemId, output_index: index, content_index: 0, delta, logprobs: [] };
}
