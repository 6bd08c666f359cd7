/** How often a process started by npm checks that npm is still there. */
const PARENT_CHECK_MS = 1_000;

/**
 * Runs `stop` on the first SIGINT or SIGTERM (a graceful stop); a second signal while it
 * runs exits at once. Started by npm (`npx chat-serve start`, `npm start`), the process is
 * also stopped gracefully when npm exits: npm runs it under `sh -c`, which does not pass
 * npm's SIGTERM on, and the server would otherwise keep running orphaned.
 */
export function onStopSignal(stop: (signal: string) => Promise<void>): void {
  let stopping = false;
  const handle = (signal: string) => {
    if (stopping) {
      process.stdout.write("stopping now\n");
      process.exit(1);
    }
    stopping = true;
    stopWatchingParent();
    void stop(signal);
  };
  process.on("SIGINT", () => handle("SIGINT"));
  process.on("SIGTERM", () => handle("SIGTERM"));
  const stopWatchingParent = whenParentExits(() => handle("npm exited"));
}

/**
 * Calls `action` once when the process that started this one exits, for a process started by
 * npm (it sets `npm_execpath`); returns the function that stops watching.
 */
export function whenParentExits(action: () => void): () => void {
  if (process.env.npm_execpath === undefined) return () => {};
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    action();
  }, PARENT_CHECK_MS);
  // Never what keeps the process alive.
  timer.unref();
  return () => clearInterval(timer);
}

/** Set for a server that `--watch` runs, which it stops and starts on every change. */
export const WATCHED_CHILD = "CHAT_SERVE_WATCHED_CHILD";
