import type { ChatCompletionRequest, ChatMessage } from "../../wire/request.js";

// `POST /responses/input_tokens` (and Anthropic's `count_tokens`, and `/responses/compact`'s
// sizes): how many tokens a request's input is, counted without running the graph. The
// tokenizer is OpenAI's `o200k_base` (GPT-4o, 4.1, 5 and the o-series), through `js-tiktoken`
// (LangChain's own dependency); the framing follows OpenAI's published way of counting chat
// input: 3 tokens per message, 1 for a name, 3 to prime the answer.
//
// Byte-pair encoding costs time quadratic in the length of one pre-token, and one unbroken run
// of letters (minified code, base64, "x" × 20,000) is one pre-token: 20,000 letters took 30 s
// of the event loop. So a run of more than LONG_RUN letters, punctuation marks or whitespace
// characters is counted in pieces of PIECE characters, each encoded on its own: linear time,
// exact for ordinary text, an estimate for such a run (exact for one letter repeated). Between every SLICE characters the count yields to the
// event loop, so a 1 MiB body (the default `bodyLimit`, the counting routes' limit too) costs
// well under a second and never holds up another request.

type Encoder = { encode(text: string): number[] };

const LONG_RUN = 64;
const PIECE = 8;
const SLICE = 65_536;

let encoder: Promise<Encoder> | undefined;

/** The tokenizer, loaded on the first count (its ranks are a few megabytes). */
function tokenizer(): Promise<Encoder> {
  encoder ??= Promise.all([import("js-tiktoken/lite"), import("js-tiktoken/ranks/o200k_base")]).then(
    ([{ Tiktoken }, { default: ranks }]) => new Tiktoken(ranks),
  );
  return encoder;
}

/** A run the tokenizer would take as one pre-token (letters, punctuation, whitespace), too long
 * to encode whole. Digits are pre-split in threes by the tokenizer itself, so a hash is not one. */
const longRun = new RegExp(`[\\p{L}\\p{M}]{${LONG_RUN + 1},}|[^\\s\\p{L}\\p{N}]{${LONG_RUN + 1},}|\\s{${LONG_RUN + 1},}`, "gu");

/** Counts texts in bounded time, yielding to the event loop between slices of work. */
class BoundedCounter {
  #encoder: Encoder;
  #sinceYield = 0;

  constructor(encoder: Encoder) {
    this.#encoder = encoder;
  }

  /** The tokens of one text; long unbroken runs counted piece by piece. */
  async count(text: string): Promise<number> {
    if (text.length === 0) return 0;
    let tokens = 0;
    let start = 0;
    longRun.lastIndex = 0;
    for (let match = longRun.exec(text); match !== null; match = longRun.exec(text)) {
      tokens += await this.#encodeSlices(text.slice(start, match.index));
      const run = match[0];
      for (let at = 0; at < run.length; at += PIECE) tokens += await this.#encode(run.slice(at, at + PIECE));
      start = match.index + run.length;
    }
    return tokens + (await this.#encodeSlices(text.slice(start)));
  }

  /** A text between long runs, encoded a slice at a time; each cut falls before a space that
   * follows a word, where the tokenizer would start a new pre-token anyway. */
  async #encodeSlices(text: string): Promise<number> {
    let tokens = 0;
    let rest = text;
    while (rest.length > SLICE) {
      let cut = rest.lastIndexOf(" ", SLICE);
      while (cut > 0 && /\s/u.test(rest[cut - 1] ?? "")) cut = rest.lastIndexOf(" ", cut - 1);
      if (cut <= 0) cut = SLICE;
      tokens += await this.#encode(rest.slice(0, cut));
      rest = rest.slice(cut);
    }
    return tokens + (await this.#encode(rest));
  }

  async #encode(text: string): Promise<number> {
    if (text.length === 0) return 0;
    this.#sinceYield += text.length;
    if (this.#sinceYield >= SLICE) {
      this.#sinceYield = 0;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    return this.#encoder.encode(text).length;
  }
}

/** The text a message gives the model: its content's text parts (an image counts as its URL's text is not sent). */
function contentText(content: ChatMessage["content"]): string {
  if (content === undefined || content === null) return "";
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part) => ("text" in part && typeof part.text === "string" ? part.text : "")).join("");
}

/** The input tokens of an engine request: its messages, their tool calls, and the tools it offers. */
export async function countInputTokens(request: ChatCompletionRequest): Promise<number> {
  const counter = new BoundedCounter(await tokenizer());
  let tokens = 3;
  for (const message of request.messages) {
    tokens += 3 + (await counter.count(message.role)) + (await counter.count(contentText(message.content)));
    if ("name" in message && typeof message.name === "string") tokens += 1 + (await counter.count(message.name));
    if (message.role === "assistant") {
      for (const call of message.tool_calls ?? [])
        tokens += (await counter.count(call.function.name)) + (await counter.count(call.function.arguments));
    }
  }
  for (const tool of request.tools ?? []) tokens += await counter.count(JSON.stringify(tool.function));
  return tokens;
}
