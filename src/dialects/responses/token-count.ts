// How many tokens a text is, for `input_tokens`, `count_tokens` and `/responses/compact`: the
// tokenizer is OpenAI's `o200k_base` (GPT-4o, 4.1, 5 and the o-series), through `js-tiktoken`
// (LangChain's own dependency). Run in the tokenizer's worker thread (tokenizer-worker.ts),
// never on the server's event loop: loading the tokenizer alone takes half a second or more.
//
// Byte-pair encoding costs time quadratic in the length of one pre-token, and one unbroken run
// of letters (minified code, base64, "x" × 20,000) is one pre-token: 20,000 letters took 30 s.
// So a run of more than LONG_RUN letters, punctuation marks or whitespace characters is counted
// in pieces of PIECE characters, each encoded on its own: linear time, exact for ordinary text,
// an estimate for such a run (exact for one letter repeated). Long stretches between such runs
// are encoded a slice at a time, cut before a space that follows a word.

/** What counts: the tokenizer's `encode`. */
export type Encoder = { encode(text: string): number[] };

const LONG_RUN = 64;
const PIECE = 8;
const SLICE = 65_536;

/** A run the tokenizer would take as one pre-token (letters, punctuation, whitespace), too long
 * to encode whole. Digits are pre-split in threes by the tokenizer itself, so a hash is not one. */
const longRun = new RegExp(`[\\p{L}\\p{M}]{${LONG_RUN + 1},}|[^\\s\\p{L}\\p{N}]{${LONG_RUN + 1},}|\\s{${LONG_RUN + 1},}`, "gu");

/** A text between long runs, encoded a slice at a time. */
function encodeSlices(encoder: Encoder, text: string): number {
  let tokens = 0;
  let rest = text;
  while (rest.length > SLICE) {
    let cut = rest.lastIndexOf(" ", SLICE);
    while (cut > 0 && /\s/u.test(rest[cut - 1] ?? "")) cut = rest.lastIndexOf(" ", cut - 1);
    if (cut <= 0) cut = SLICE;
    tokens += encoder.encode(rest.slice(0, cut)).length;
    rest = rest.slice(cut);
  }
  return tokens + (rest.length === 0 ? 0 : encoder.encode(rest).length);
}

/** The tokens of one text, in time linear in its length; long unbroken runs counted piece by piece. */
export function countTokens(encoder: Encoder, text: string): number {
  if (text.length === 0) return 0;
  let tokens = 0;
  let start = 0;
  longRun.lastIndex = 0;
  for (let match = longRun.exec(text); match !== null; match = longRun.exec(text)) {
    tokens += encodeSlices(encoder, text.slice(start, match.index));
    const run = match[0];
    for (let at = 0; at < run.length; at += PIECE) tokens += encoder.encode(run.slice(at, at + PIECE)).length;
    start = match.index + run.length;
  }
  return tokens + encodeSlices(encoder, text.slice(start));
}
