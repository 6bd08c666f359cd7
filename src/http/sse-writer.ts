import { once } from "node:events";
import type { FastifyReply } from "fastify";
import type { ErrorBody } from "../wire/response.js";

export interface SseOptions {
  /** A `: keep-alive` comment is written after this much silence. */
  keepAliveMs: number;
  /** The error frame to send when the producer fails after the stream has begun. */
  errorFrame: (error: unknown) => ErrorBody;
}

/**
 * The only place that knows SSE framing: headers flushed at once, one `data:` frame per
 * chunk, keep-alive comments, an error frame on failure, and `data: [DONE]` at the end.
 * Returns once the response has ended or the client has gone.
 */
export async function writeSse(reply: FastifyReply, chunks: AsyncIterable<unknown>, options: SseOptions): Promise<void> {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    ...(reply.getHeaders() as Record<string, string>),
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
    "x-accel-buffering": "no",
  });
  raw.flushHeaders();

  let keepAlive: NodeJS.Timeout | undefined;
  const armKeepAlive = () => {
    clearTimeout(keepAlive);
    keepAlive = setTimeout(() => {
      if (!raw.destroyed) raw.write(": keep-alive\n\n");
      armKeepAlive();
    }, options.keepAliveMs);
    keepAlive.unref();
  };
  const write = async (frame: string) => {
    if (raw.destroyed) return;
    armKeepAlive();
    if (!raw.write(frame)) await Promise.race([once(raw, "drain"), once(raw, "close")]);
  };

  armKeepAlive();
  try {
    for await (const chunk of chunks) {
      if (raw.destroyed) break;
      await write(`data: ${JSON.stringify(chunk)}\n\n`);
    }
  } catch (error) {
    await write(`data: ${JSON.stringify(options.errorFrame(error))}\n\n`);
  } finally {
    clearTimeout(keepAlive);
  }
  await write("data: [DONE]\n\n");
  if (!raw.destroyed) raw.end();
}
