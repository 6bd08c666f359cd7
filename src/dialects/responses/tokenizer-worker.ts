import { parentPort } from "node:worker_threads";
import { Tiktoken } from "js-tiktoken/lite";
import ranks from "js-tiktoken/ranks/o200k_base";
import { countTokens } from "./token-count.js";

// The tokenizer's thread: it loads the ranks once (half a second or more of work that would
// stall every request on the event loop) and answers each batch of texts with their counts.

/** A batch of texts to count. */
export interface CountAsk {
  id: number;
  texts: string[];
}

/** Their counts, in order; or why they could not be counted. */
export type CountAnswer = { id: number; counts: number[] } | { id: number; error: string };

const encoder = new Tiktoken(ranks);
parentPort?.on("message", ({ id, texts }: CountAsk) => {
  try {
    parentPort?.postMessage({ id, counts: texts.map((text) => countTokens(encoder, text)) } satisfies CountAnswer);
  } catch (error) {
    parentPort?.postMessage({ id, error: error instanceof Error ? error.message : String(error) } satisfies CountAnswer);
  }
});
