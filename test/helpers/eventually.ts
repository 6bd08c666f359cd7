import { setTimeout as sleep } from "node:timers/promises";

/** Retries an assertion until it passes or the time is up; then its last error is thrown. */
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
