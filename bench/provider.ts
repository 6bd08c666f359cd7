// A loopback OpenAI-compatible model provider for the `models` bench section, in its own
// process: `POST /v1/chat/completions` for the model `bench-<tokens>x<delay ms>` answers that
// many tokens, one every delay (the first after one delay, as a model's time to first token),
// with usage in the last chunk when `stream_options.include_usage` asks for it, as OpenAI does.
//
// Every token carries the provider's clock so that the client can tell what the server in
// between added: `T<ms>` is when the token was written, and the first token also has `A<ms>`,
// when the request arrived. The clock is CLOCK_MONOTONIC (`process.hrtime`), the same in
// every process of the machine. Prints `listening <url>`.

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";

const PROMPT_TOKENS = 12;

const now = () => Number(process.hrtime.bigint()) / 1e6;

interface Body {
  model?: string;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
}

/** The answer's shape, from the model name: `bench-200x20` is 200 tokens, one every 20 ms. */
function shape(model: string): { tokens: number; delayMs: number } {
  const match = /^bench-(\d+)x(\d+)$/u.exec(model);
  return { tokens: Number(match?.[1] ?? 200), delayMs: Number(match?.[2] ?? 20) };
}

const usageOf = (tokens: number) => ({ prompt_tokens: PROMPT_TOKENS, completion_tokens: tokens, total_tokens: PROMPT_TOKENS + tokens });

function chunk(id: string, model: string, delta: object, finish: string | null = null): string {
  const frame = { id, object: "chat.completion.chunk", created: 0, model, choices: [{ index: 0, delta, finish_reason: finish }] };
  return `data: ${JSON.stringify(frame)}\n\n`;
}

function stream(body: Body, arrived: number, response: ServerResponse): void {
  const id = `chatcmpl-bench-${arrived}`;
  const model = body.model ?? "bench";
  const { tokens, delayMs } = shape(model);
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  response.write(chunk(id, model, { role: "assistant", content: "" }));
  let sent = 0;
  const next = () => {
    const at = now();
    const text = `${sent === 0 ? `A${arrived.toFixed(3)}` : ""}T${at.toFixed(3)} `;
    response.write(chunk(id, model, { content: text }));
    sent += 1;
    if (sent < tokens) {
      timer = setTimeout(next, delayMs);
      return;
    }
    timer = undefined;
    response.write(chunk(id, model, {}, "stop"));
    if (body.stream_options?.include_usage === true) {
      response.write(
        `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: 0, model, choices: [], usage: usageOf(tokens) })}\n\n`,
      );
    }
    response.end("data: [DONE]\n\n");
  };
  let timer: NodeJS.Timeout | undefined = setTimeout(next, delayMs);
  // The server went away (its client left): stop writing.
  response.once("close", () => clearTimeout(timer));
}

function complete(body: Body, arrived: number, response: ServerResponse): void {
  const model = body.model ?? "bench";
  const { tokens, delayMs } = shape(model);
  const text = Array.from({ length: tokens }, (_, index) => `T${index}`).join(" ");
  const answer = {
    id: `chatcmpl-bench-${arrived}`,
    object: "chat.completion",
    created: 0,
    model,
    choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
    usage: usageOf(tokens),
  };
  const timer = setTimeout(() => response.end(JSON.stringify(answer)), delayMs * tokens);
  response.once("close", () => clearTimeout(timer));
  response.setHeader("content-type", "application/json");
}

const server = createServer((request: IncomingMessage, response: ServerResponse) => {
  const arrived = now();
  let raw = "";
  request.setEncoding("utf8");
  request.on("data", (data: string) => (raw += data));
  request.on("end", () => {
    if (request.method !== "POST" || !request.url?.endsWith("/chat/completions")) {
      response.writeHead(404, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: { message: `no route ${request.method} ${request.url}`, type: "invalid_request_error" } }));
      return;
    }
    const body = JSON.parse(raw) as Body;
    if (body.stream === true) stream(body, arrived, response);
    else complete(body, arrived, response);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", 4096, () => {
  const { port } = server.address() as { port: number };
  process.stdout.write(`listening http://127.0.0.1:${port}/v1\n`);
});
process.on("SIGTERM", () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
