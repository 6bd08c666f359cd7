// Loaded into the `chat-serve start` process by `npm run soak` (node --import), never by the
// server itself: on SIGUSR2 it collects garbage and prints the heap and RSS on one line.
process.on("SIGUSR2", () => {
  const collect = (globalThis as { gc?: () => void }).gc;
  collect?.();
  collect?.();
  const { heapUsed, rss } = process.memoryUsage();
  process.stdout.write(`SOAK_MEMORY ${JSON.stringify({ heapUsed, rss, handles: process.getActiveResourcesInfo().length })}\n`);
});
