/**
 * Runs `stop` on the first SIGINT or SIGTERM (a graceful stop); a second signal while it
 * runs exits at once.
 */
export function onStopSignal(stop: (signal: string) => Promise<void>): void {
  let stopping = false;
  const handle = (signal: string) => {
    if (stopping) {
      process.stdout.write("stopping now\n");
      process.exit(1);
    }
    stopping = true;
    void stop(signal);
  };
  process.on("SIGINT", () => handle("SIGINT"));
  process.on("SIGTERM", () => handle("SIGTERM"));
}
