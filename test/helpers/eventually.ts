import { setTimeout as sleep } from "node:timers/promises";

/**
 * Retries an assertion until it passes or the time is up; then its last error is thrown.
 * Give `assert.ok` a message in the check: without one, node's assert parses the test file's
 * source to word its message, which in a long file under tsx takes seconds for every try and
 * starves the event loop (a test that polled `probe.chunks` that way hung for minutes).
 */
export async function eventually(check: () => Promise<void>, timeoutMs: number, intervalMs = 250): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(intervalMs);
    }
  }
}
