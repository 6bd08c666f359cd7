import type { FastifyReply } from "fastify";
import { whenWritable } from "../../http/writable.js";
import type { LoggedEvent } from "../../runs/agent/run-events.js";

/**
 * Writes a run's events as the LangGraph server does: `event:` and `data:` lines per event,
 * with its `id:` when the stream is resumable (a client reconnects with `Last-Event-ID`), a
 * `: heartbeat` comment after `keepAliveMs` of silence; a client whose connection stays full for
 * `stalledClientMs` is dropped. Returns when the events end or the
 * client has gone; the heartbeat timer is this function's own and ends on every way out.
 */
export async function writeAgentSse(
  reply: FastifyReply,
  events: AsyncIterable<LoggedEvent>,
  options: { keepAliveMs: number; stalledClientMs: number; ids: boolean; headers?: Record<string, string> },
): Promise<void> {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    ...(reply.getHeaders() as Record<string, string>),
    ...options.headers,
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    "x-accel-buffering": "no",
  });
  raw.flushHeaders();
  const heartbeat = setInterval(() => {
    if (!raw.destroyed) raw.write(": heartbeat\n\n");
  }, options.keepAliveMs);
  heartbeat.unref();
  try {
    for await (const { id, event, json } of events) {
      if (raw.destroyed) break;
      heartbeat.refresh();
      // The request log says a run whose stream ended in an error failed, though its status was 200.
      if (event === "error") reply.request.chatServeFailure ??= errorNameOf(json);
      raw.write(`${options.ids ? `id: ${id}\n` : ""}event: ${event}\ndata: ${json}\n\n`);
      // A client that stops reading is waited for (the run's events stay in its log), then dropped.
      const full = whenWritable(raw, options.stalledClientMs);
      if (full !== undefined) await full;
    }
  } finally {
    clearInterval(heartbeat);
    if (!raw.destroyed) raw.end();
  }
}

/** The error's name an `error` event carries (`{"error": "InternalError", "message": …}`). */
function errorNameOf(json: string): string {
  try {
    const { error } = JSON.parse(json) as { error?: unknown };
    return typeof error === "string" && error !== "" ? error : "run_failed";
  } catch {
    return "run_failed";
  }
}

/** A signal that fires when the client goes away, and the function that stops listening. */
export function clientGone(reply: FastifyReply): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const onClose = () => {
    if (!reply.raw.writableFinished) controller.abort(new Error("the client disconnected"));
  };
  reply.raw.on("close", onClose);
  return { signal: controller.signal, dispose: () => reply.raw.off("close", onClose) };
}
