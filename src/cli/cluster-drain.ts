import cluster from "node:cluster";

// How the workers of `start --workers N` close their shared port together: each tells the
// primary when its runs have drained, and the primary says "close" once every worker has.
// A worker that closed alone would reset the keep-alive connections it holds while the others
// still drain, so a load balancer would see a broken connection instead of a 503.
const DRAINED = "chat-serve:drained";
const CLOSE = "chat-serve:close";

/** In a worker: says its runs have drained, and resolves when the primary says to close (or is gone). */
export function workerDrained(): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      process.off("message", onMessage);
      process.off("disconnect", done);
      resolve();
    };
    const onMessage = (message: { type?: string } | null) => {
      if (message?.type === CLOSE) done();
    };
    process.on("message", onMessage);
    process.on("disconnect", done);
    if (!process.connected) done();
    else process.send?.({ type: DRAINED });
  });
}

/**
 * In the primary, once it is stopping: tells every worker to close once every live worker has
 * drained. A worker that exits counts as drained.
 */
export function closeWhenAllDrained(): void {
  const drained = new Set<number>();
  const check = () => {
    const live = Object.values(cluster.workers ?? {}).filter((worker) => worker !== undefined && !worker.isDead());
    if (live.every((worker) => drained.has(worker!.id))) {
      // A worker may exit between the check and the send: its channel is gone (EPIPE), and
      // with a callback that error is handled here instead of crashing the primary.
      for (const worker of live) if (worker!.isConnected()) worker!.send({ type: CLOSE }, undefined, () => {});
    }
  };
  cluster.on("message", (worker, message: { type?: string } | null) => {
    if (message?.type !== DRAINED) return;
    drained.add(worker.id);
    check();
  });
  cluster.on("exit", check);
}
