import type { ServerResponse } from "node:http";
import type { FastifyReply } from "fastify";
import type { ErrorBody } from "../wire/response.js";

export interface SseOptions {
  /** A `: keep-alive` comment is written after this much silence. */
  keepAliveMs: number;
  /** The error frame to send when the producer fails after the stream has begun. */
  errorFrame: (error: unknown) => ErrorBody;
  /**
   * Typed events (the Responses API): each chunk's `type` is written as its `event:` line,
   * and the stream ends without `data: [DONE]`, its last event saying it is over.
   */
  typedEvents?: boolean;
}

function frameOf(chunk: unknown, typed: boolean): string {
  const data = `data: ${JSON.stringify(chunk)}\n\n`;
  return typed ? `event: ${(chunk as { type: string }).type}\n${data}` : data;
}

/** Waits until the socket takes more data or the response closes; leaves no listener behind. */
function drained(raw: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      raw.off("drain", done);
      raw.off("close", done);
      resolve();
    };
    raw.on("drain", done);
    raw.on("close", done);
  });
}

/**
 * The only place that knows SSE framing: headers flushed at once, one `data:` frame per
 * chunk (with its `event:` name for typed events), the frames of one event-loop turn in
 * one write, keep-alive comments, an error frame on failure, and `data: [DONE]` at the end
 * of a chat-completions stream.
 * Returns once the response has ended or the client has gone. The keep-alive timer is this
 * function's own: one timer, pushed back by every write, cleared on every way out.
 */
export async function writeSse(reply: FastifyReply, chunks: AsyncIterable<unknown>, options: SseOptions): Promise<void> {
  reply.hijack();
  const raw = reply.raw;
  // No `connection` header of our own: Node answers `keep-alive`, or `close` (and closes the
  // socket after the last frame) when the client asked for `Connection: close`.
  raw.writeHead(200, {
    ...(reply.getHeaders() as Record<string, string>),
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    "x-accel-buffering": "no",
  });
  raw.flushHeaders();

  const typed = options.typedEvents === true;
  const keepAlive = setInterval(() => {
    if (!raw.destroyed) raw.write(": keep-alive\n\n");
  }, options.keepAliveMs);
  keepAlive.unref();
  // Frames produced in the same turn of the event loop leave in one write(): they collect in
  // `pending`, and the tick queue writes them once that turn's promise jobs (the run handing
  // over whatever chunks it has ready) have run. The first frame into an empty `pending`
  // queues that write. A full socket holds the next frame back.
  let pending = "";
  const flush = () => {
    if (pending === "" || raw.destroyed) return;
    const frames = pending;
    pending = "";
    raw.write(frames);
  };
  const write = async (frame: string) => {
    if (raw.destroyed) return;
    keepAlive.refresh();
    if (pending === "") process.nextTick(flush);
    pending += frame;
    if (raw.writableNeedDrain) await drained(raw);
  };

  try {
    try {
      for await (const chunk of chunks) {
        if (raw.destroyed) break;
        await write(frameOf(chunk, typed));
      }
    } catch (error) {
      await write(`data: ${JSON.stringify(options.errorFrame(error))}\n\n`);
    }
    if (!typed) await write("data: [DONE]\n\n");
  } finally {
    clearInterval(keepAlive);
  }
  if (raw.destroyed) return;
  const last = pending;
  pending = "";
  raw.end(last);
}
