import { CitationIndexError } from "../errors/developer-errors.js";
/**
 * A citation as graph authors put it on a text block of the final assistant message.
 * Both the spec's snake_case and LangChain's camelCase field names are read. Indices count
 * Unicode code points of the containing text block; `end_index` is inclusive.
 */
export interface CitationAnnotation {
  type?: string;
  url?: string;
  title?: string;
  start_index?: number;
  end_index?: number;
  cited_text?: string;
  startIndex?: number;
  endIndex?: number;
  citedText?: string;
}

/** A citation's fields after reading either spelling. */
export interface NormalizedCitation {
  url: string;
  title: string;
  start: number;
  end: number;
  citedText: string | undefined;
}

/** True for an annotation that is a URL citation (as opposed to other annotation kinds). */
export function isUrlCitation(annotation: unknown): annotation is CitationAnnotation {
  if (typeof annotation !== "object" || annotation === null) return false;
  const { type, url } = annotation as CitationAnnotation;
  return (type === undefined || type === "citation" || type === "url_citation") && typeof url === "string";
}

function normalizeCitation(annotation: CitationAnnotation): NormalizedCitation {
  const start = annotation.start_index ?? annotation.startIndex;
  const end = annotation.end_index ?? annotation.endIndex;
  if (!Number.isInteger(start) || !Number.isInteger(end)) {
    throw new CitationIndexError(`the citation of ${annotation.url} needs integer start_index and end_index`);
  }
  return {
    url: String(annotation.url),
    title: annotation.title ?? String(annotation.url),
    start: start as number,
    end: end as number,
    citedText: annotation.cited_text ?? annotation.citedText,
  };
}

/**
 * Checks a citation against the code points of its text block and returns it normalized.
 * Throws CitationIndexError for indices that do not fit or `cited_text` that does not match.
 */
export function checkCitation(annotation: CitationAnnotation, codePoints: readonly string[]): NormalizedCitation & { slice: string } {
  const citation = normalizeCitation(annotation);
  if (citation.start < 0 || citation.end < citation.start || citation.end >= codePoints.length) {
    throw new CitationIndexError(
      `the citation of ${citation.url} spans ${citation.start}..${citation.end} (inclusive), ` +
        `outside its text of ${codePoints.length} characters`,
    );
  }
  const slice = codePoints.slice(citation.start, citation.end + 1).join("");
  if (citation.citedText !== undefined && citation.citedText !== slice) {
    throw new CitationIndexError(
      `the citation of ${citation.url} says it cites ${JSON.stringify(citation.citedText)} but its indices select ${JSON.stringify(slice)}`,
    );
  }
  return { ...citation, slice };
}

/**
 * Validates a citation's indices against its text and returns the cited slice: code points
 * `start_index` through `end_index`, inclusive. When the citation carries `cited_text`, the
 * slice must equal it.
 *
 * @example
 * ```ts
 * citationSlice({ url: "https://e.org", start_index: 4, end_index: 8 }, "The quick fox"); // "quick"
 * ```
 */
export function citationSlice(annotation: CitationAnnotation, text: string): string {
  return checkCitation(annotation, Array.from(text)).slice;
}
