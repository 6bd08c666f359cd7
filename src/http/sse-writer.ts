import type { FastifyReply } from "fastify";
import { JsonText } from "../util/json-text.js";
import type { ErrorBody } from "../wire/response.js";
import { whenWritable } from "./writable.js";

export interface SseOptions {
  /** A `: keep-alive` comment is written after this much silence. */
  keepAliveMs: number;
  /** A client that takes nothing for this long while the socket is full is dropped (its run ends as if it left). */
  stalledClientMs: number;
  /** The error frame to send when the producer fails after the stream has begun. */
  errorFrame: (error: unknown) => ErrorBody;
  /**
   * Typed events (the Responses API): each chunk's `type` is written as its `event:` line,
   * and the stream ends without `data: [DONE]`, its last event saying it is over.
   */
  typedEvents?: boolean;
  /** `data: [DONE]` ends an untyped stream unless this is false (AG-UI's ends with its last event). */
  endWithDone?: boolean;
}

/**
 * What a dialect sends for a run's events, so that no generator sits between the run and the
 * socket: the chunks that open the stream, those each event turns into (a promise where the
 * dialect must save something first), and those that end a stream whose run failed.
 */
export interface SseRender<T> {
  first: Iterable<unknown>;
  of(item: T): Iterable<unknown> | Promise<Iterable<unknown>>;
  fail?(error: unknown): Iterable<unknown>;
}

function frameOf(chunk: unknown, typed: boolean): string {
  const data = `data: ${chunk instanceof JsonText ? chunk.json : JSON.stringify(chunk)}\n\n`;
  return typed ? `event: ${(chunk as { type: string }).type}\n${data}` : data;
}

/**
 * The only place that knows SSE framing: headers flushed at once, one `data:` frame per
 * chunk (the items themselves, or what `render` makes of each) with its `event:` name for
 * typed events, the frames of one event-loop turn in
 * one write, keep-alive comments, an error frame on failure, and `data: [DONE]` at the end
 * of a chat-completions stream.
 * Returns once the response has ended or the client has gone. The keep-alive timer is this
 * function's own: one timer, pushed back by every write, cleared on every way out.
 */
export async function writeSse<T>(reply: FastifyReply, items: AsyncIterable<T>, options: SseOptions, render?: SseRender<T>): Promise<void> {
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
  // queues that write.
  let pending = "";
  const flush = () => {
    if (pending === "" || raw.destroyed) return;
    const frames = pending;
    pending = "";
    keepAlive.refresh();
    raw.write(frames);
  };
  const write = (frame: string): void => {
    if (raw.destroyed) return;
    if (pending === "") process.nextTick(flush);
    pending += frame;
  };
  // The frames of one event (one to three chunks) go into `pending` together; a full socket
  // holds back the next event. A promise only then: a token costs no promise of its own.
  const send = (chunks: Iterable<unknown>): Promise<void> | undefined => {
    for (const chunk of chunks) write(frameOf(chunk, typed));
    return whenWritable(raw, options.stalledClientMs);
  };
  try {
    try {
      if (render !== undefined) await send(render.first);
      for await (const item of items) {
        if (raw.destroyed) break;
        let chunks: Iterable<unknown> | Promise<Iterable<unknown>> = [item];
        if (render !== undefined) chunks = render.of(item);
        const full = send(chunks instanceof Promise ? await chunks : chunks);
        if (full !== undefined) await full;
      }
    } catch (error) {
      if (render?.fail === undefined) write(`data: ${JSON.stringify(options.errorFrame(error))}\n\n`);
      else for (const chunk of render.fail(error)) write(frameOf(chunk, typed));
    }
    if (!typed && options.endWithDone !== false) write("data: [DONE]\n\n");
  } finally {
    clearInterval(keepAlive);
  }
  if (raw.destroyed) return;
  const last = pending;
  pending = "";
  raw.end(last);
}
