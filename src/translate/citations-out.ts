import type { BaseMessage } from "@langchain/core/messages";
import { citationSlice, isUrlCitation, normalizeCitation } from "../events/citations.js";
import type { UrlCitation } from "../wire/response.js";
import { textBlocks } from "./message-text.js";

/**
 * The URL citations of a final assistant message, with indices moved from their text block
 * into the whole response text (the text blocks joined). `end_index` stays inclusive.
 * Throws CitationIndexError for indices that do not fit their block.
 */
export function collectCitations(message: Pick<BaseMessage, "content">): UrlCitation[] {
  const citations: UrlCitation[] = [];
  let offset = 0;
  for (const block of textBlocks(message)) {
    for (const annotation of block.annotations ?? []) {
      if (!isUrlCitation(annotation)) continue;
      citationSlice(annotation, block.text);
      const citation = normalizeCitation(annotation);
      citations.push({
        type: "url_citation",
        url_citation: {
          url: citation.url,
          title: citation.title,
          start_index: offset + citation.start,
          end_index: offset + citation.end,
        },
      });
    }
    offset += Array.from(block.text).length;
  }
  return citations;
}
