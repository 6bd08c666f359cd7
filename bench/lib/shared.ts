// What every bench section sends.

/** The API key the `production` bench target accepts. */
export const BENCH_KEY = "sk-bench-0123456789abcdef";

/** The 9-word prompt of every throughput case. */
export const PROMPT = "the quick brown fox jumps over the lazy dog";

/** A chat-completions body for the echo graph. */
export const chatBody = (stream: boolean, content = PROMPT) => ({ model: "echo", stream, messages: [{ role: "user", content }] });

/** A Responses body for the echo graph. */
export const responsesBody = (stream: boolean) => ({ model: "echo", stream, input: PROMPT });

/** The first non-empty text of a stream: the floor's frames carry `text`, chat-serve's a `content` delta. */
export const FIRST_TEXT = /"(text|content)":"[^"]/u;
