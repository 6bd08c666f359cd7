import { Worker } from "node:worker_threads";
import type { ChatCompletionRequest, ChatMessage } from "../../wire/request.js";
import type { CountAnswer, CountAsk } from "./tokenizer-worker.js";

// `POST /responses/input_tokens` (and Anthropic's `count_tokens`, and `/responses/compact`'s
// sizes): how many tokens a request's input is, counted without running the graph, following
// OpenAI's published way of counting chat input: 3 tokens per message, 1 for a name, 3 to prime
// the answer. The texts are counted in the tokenizer's own thread (tokenizer-worker.ts, started
// on the first count), so neither loading the tokenizer nor counting a 1 MiB body ever holds up
// another request (`/health` included).

/**
 * The tokenizer's thread: started on the first count, shared by every count of the process,
 * holding the process only while a count waits on it, and forgotten when it fails, to start
 * again on the next count. Counts wait their turn in it.
 */
class TokenizerThread {
  #worker: Worker | undefined;
  #next = 0;
  readonly #waiting = new Map<number, { resolve(counts: number[]): void; reject(error: Error): void }>();

  count(texts: string[]): Promise<number[]> {
    const worker = this.#worker ?? this.#start();
    this.#next += 1;
    const id = this.#next;
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      // Held while a count waits on it, let go when none does: it never keeps an idle process alive.
      worker.ref();
      worker.postMessage({ id, texts } satisfies CountAsk);
    });
  }

  #start(): Worker {
    // From source (the tests, under tsx) the thread loads TypeScript through tsx, as this thread does.
    const fromSource = import.meta.url.endsWith(".ts");
    const entry = new URL(fromSource ? "./tokenizer-worker.ts" : "./tokenizer-worker.js", import.meta.url);
    const worker = fromSource
      ? new Worker(`import("tsx/esm/api").then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}); });`, {
          eval: true,
        })
      : new Worker(entry);
    worker.on("message", (answer: CountAnswer) => {
      const waiting = this.#waiting.get(answer.id);
      this.#waiting.delete(answer.id);
      if (this.#waiting.size === 0) worker.unref();
      if ("error" in answer) waiting?.reject(new Error(`The tokenizer could not count: ${answer.error}`));
      else waiting?.resolve(answer.counts);
    });
    const fail = (error: Error) => {
      if (this.#worker === worker) this.#worker = undefined;
      for (const waiting of this.#waiting.values()) waiting.reject(error);
      this.#waiting.clear();
    };
    worker.on("error", fail);
    worker.on("exit", (code) => fail(new Error(`The tokenizer's thread stopped (exit code ${code}).`)));
    // After the listeners (a message listener refs the thread's port).
    worker.unref();
    this.#worker = worker;
    return worker;
  }
}

let thread: TokenizerThread | undefined;

/** The text a message gives the model: its content's text parts (an image counts as its URL's text is not sent). */
function contentText(content: ChatMessage["content"]): string {
  if (content === undefined || content === null) return "";
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part) => ("text" in part && typeof part.text === "string" ? part.text : "")).join("");
}

/** The input tokens of an engine request: its messages, their tool calls, and the tools it offers. */
export async function countInputTokens(request: ChatCompletionRequest): Promise<number> {
  let framing = 3;
  const texts: string[] = [];
  for (const message of request.messages) {
    framing += 3;
    texts.push(message.role, contentText(message.content));
    if ("name" in message && typeof message.name === "string") {
      framing += 1;
      texts.push(message.name);
    }
    if (message.role === "assistant") {
      for (const call of message.tool_calls ?? []) texts.push(call.function.name, call.function.arguments);
    }
  }
  for (const tool of request.tools ?? []) texts.push(JSON.stringify(tool.function));
  thread ??= new TokenizerThread();
  const counts = await thread.count(texts);
  return counts.reduce((sum, count) => sum + count, framing);
}
