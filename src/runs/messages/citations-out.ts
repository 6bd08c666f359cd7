import type { BaseMessage } from "@langchain/core/messages";
import { checkCitation, isUrlCitation } from "../../events/citations.js";
import type { UrlCitation } from "../../wire/response.js";
import { textBlocks } from "./message-text.js";

/**
 * The URL citations of a final assistant message, with indices moved from their text block
 * into the whole response text (the text blocks joined). `end_index` stays inclusive.
 * Throws CitationIndexError for indices that do not fit their block.
 */
export function collectCitations(message: Pick<BaseMessage, "content">): UrlCitation[] {
  const blocks = textBlocks(message);
  // Most answers cite nothing: their text is not split into code points at all.
  if (!blocks.some((block) => block.annotations?.some(isUrlCitation))) return [];
  const citations: UrlCitation[] = [];
  let offset = 0;
  for (const block of blocks) {
    const codePoints = Array.from(block.text);
    for (const annotation of block.annotations ?? []) {
      if (!isUrlCitation(annotation)) continue;
      const citation = checkCitation(annotation, codePoints);
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
    offset += codePoints.length;
  }
  return citations;
}
