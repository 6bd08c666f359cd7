import type { IncomingMessage } from "node:http";

/** How much of a refused body is read and dropped, and for how long, before the refusal is sent. */
const DRAIN_BYTES = 32 * 1024 * 1024;
const DRAIN_MS = 5_000;

/**
 * Reads and drops what is left of a request body the server refuses (a 413) so the client, still
 * sending, reads the answer instead of a reset connection (`fetch failed`). Bounded: past
 * `DRAIN_BYTES` or `DRAIN_MS` it stops, and the answer closes the connection.
 * Resolves whether the whole body was read.
 */
export function drainRequest(raw: IncomingMessage): Promise<boolean> {
  if (raw.complete || raw.destroyed || raw.readableEnded) return Promise.resolve(true);
  return new Promise((resolve) => {
    let read = 0;
    const finish = (whole: boolean) => {
      clearTimeout(timer);
      raw.off("data", onData);
      raw.off("end", onEnd);
      raw.off("error", onFail);
      raw.off("close", onFail);
      if (!whole) raw.pause();
      resolve(whole);
    };
    const onData = (chunk: Buffer) => {
      read += chunk.length;
      if (read > DRAIN_BYTES) finish(false);
    };
    const onEnd = () => finish(true);
    const onFail = () => finish(false);
    const timer = setTimeout(() => finish(false), DRAIN_MS);
    raw.on("data", onData);
    raw.once("end", onEnd);
    raw.once("error", onFail);
    raw.once("close", onFail);
    raw.resume();
  });
}
