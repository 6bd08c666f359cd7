import type { ServerResponse } from "node:http";
import type { WebSocket } from "ws";

// Backpressure on the way out: a client that does not read must not make the server hold the
// rest of its answer. These say when a client's connection takes data again; the SSE writers
// and the runs' models (through the run's `UsageCollector`) wait on them. One wait per connection at a
// time, shared by every waiter, owns one deadline: a client that takes nothing for
// `stalledMs` is dropped, which ends its run as a client that leaves does.

const waits = new WeakMap<object, Promise<void>>();

/**
 * Undefined while the response takes data; else a promise settled when its socket drains, on
 * close, or by dropping a stalled client. The socket says it is full, not the response: a
 * response given a socket by hand (an injected request) never hears its socket drain, and its
 * own flag would stay up.
 */
export function whenWritable(raw: ServerResponse, stalledMs: number): Promise<void> | undefined {
  const full = raw.socket === null ? raw.writableNeedDrain : raw.socket.writableNeedDrain;
  if (!full || raw.destroyed) return undefined;
  let wait = waits.get(raw);
  if (wait === undefined) {
    wait = new Promise<void>((resolve) => {
      const stalled = setTimeout(() => raw.destroy(), stalledMs);
      stalled.unref();
      const socket = raw.socket;
      const done = () => {
        clearTimeout(stalled);
        raw.off("drain", done);
        raw.off("close", done);
        socket?.off("drain", done);
        waits.delete(raw);
        resolve();
      };
      raw.on("drain", done);
      raw.on("close", done);
      socket?.on("drain", done);
    });
    waits.set(raw, wait);
  }
  return wait;
}

/** Bytes a WebSocket may hold unsent before its run waits, and what it must come down to. */
const SOCKET_HIGH = 1 << 20;
const SOCKET_LOW = 1 << 18;
const SOCKET_POLL_MS = 20;

/** `whenWritable` for a WebSocket: it has no `drain` of its own, so its buffer is looked at while full. */
export function whenSocketWritable(socket: WebSocket, stalledMs: number): Promise<void> | undefined {
  if (socket.bufferedAmount <= SOCKET_HIGH || socket.readyState !== socket.OPEN) return undefined;
  let wait = waits.get(socket);
  if (wait === undefined) {
    wait = new Promise<void>((resolve) => {
      const since = Date.now();
      const check = setInterval(() => {
        if (socket.readyState === socket.OPEN && socket.bufferedAmount > SOCKET_LOW) {
          if (Date.now() - since < stalledMs) return;
          socket.terminate();
        }
        clearInterval(check);
        waits.delete(socket);
        resolve();
      }, SOCKET_POLL_MS);
      check.unref();
    });
    waits.set(socket, wait);
  }
  return wait;
}
