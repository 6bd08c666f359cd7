import type { ChatCompletionRequest, ChatMessage } from "../../wire/request.js";

// `POST /responses/input_tokens`: how many tokens a request's input is, counted without running
// the graph. The tokenizer is OpenAI's `o200k_base` (GPT-4o, 4.1, 5 and the o-series), through
// `js-tiktoken` (LangChain's own dependency); the framing follows OpenAI's published way of
// counting chat input: 3 tokens per message, 1 for a name, 3 to prime the answer.

type Encoder = { encode(text: string): number[] };

let encoder: Promise<Encoder> | undefined;

/** The tokenizer, loaded on the first count (its ranks are a few megabytes). */
function tokenizer(): Promise<Encoder> {
  encoder ??= Promise.all([import("js-tiktoken/lite"), import("js-tiktoken/ranks/o200k_base")]).then(
    ([{ Tiktoken }, { default: ranks }]) => new Tiktoken(ranks),
  );
  return encoder;
}

/** The text a message gives the model: its content's text parts (an image counts as its URL's text is not sent). */
function contentText(content: ChatMessage["content"]): string {
  if (content === undefined || content === null) return "";
  if (typeof content === "string") return content;
  return content.map((part) => ("text" in part && typeof part.text === "string" ? part.text : "")).join("");
}

/** The input tokens of an engine request: its messages, their tool calls, and the tools it offers. */
export async function countInputTokens(request: ChatCompletionRequest): Promise<number> {
  const { encode } = await tokenizer().then((loaded) => ({ encode: (text: string) => loaded.encode(text) }));
  let tokens = 3;
  for (const message of request.messages) {
    tokens += 3 + encode(message.role).length + encode(contentText(message.content)).length;
    if ("name" in message && typeof message.name === "string") tokens += 1 + encode(message.name).length;
    if (message.role === "assistant") {
      for (const call of message.tool_calls ?? []) tokens += encode(call.function.name).length + encode(call.function.arguments).length;
    }
  }
  for (const tool of request.tools ?? []) tokens += encode(JSON.stringify(tool.function)).length;
  return tokens;
}
