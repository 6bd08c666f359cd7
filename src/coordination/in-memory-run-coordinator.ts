import { once, type RunCoordinator, type RunLease } from "./run-coordinator.js";

/**
 * Leases in this process's memory. For tests and single-process development only: it
 * cannot serialize runs across workers or hosts.
 */
export class InMemoryRunCoordinator implements RunCoordinator {
  readonly #held = new Set<string>();

  async tryAcquire(key: string): Promise<RunLease | null> {
    if (this.#held.has(key)) return null;
    this.#held.add(key);
    return {
      key,
      // A memory lease cannot be lost.
      signal: new AbortController().signal,
      release: once(async () => {
        this.#held.delete(key);
      }),
    };
  }

  async check(): Promise<void> {}

  /** How many keys are leased right now. */
  get size(): number {
    return this.#held.size;
  }
}
