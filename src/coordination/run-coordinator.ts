/**
 * One held lease on a checkpoint key. `signal` aborts when the lease is lost (a distributed
 * coordinator could not renew it); `release()` is safe to call any number of times and
 * releases exactly once.
 */
export interface RunLease {
  readonly key: string;
  readonly signal: AbortSignal;
  release(): Promise<void>;
}

/**
 * Single-flight coordination of interrupt runs: at most one lease per checkpoint key, and a
 * second request is refused at once, never queued.
 */
export interface RunCoordinator {
  /**
   * A lease on the key, or null when another holder has it. Throws when the backend is down.
   * `ttlMs`: a lease that expires sooner than the coordinator's own when its holder stops
   * renewing it (a background run's, bounded by the queue's takeover time); coordinators whose
   * leases end with their holder's connection ignore it.
   */
  tryAcquire(key: string, options?: { ttlMs?: number }): Promise<RunLease | null>;
  /** Throws when the backend cannot be reached (used by `/ready`). */
  check?(): Promise<void>;
  /** Releases what the coordinator holds (connections, timers). */
  close?(): Promise<void>;
}

/** Makes a release function that runs its body exactly once, however often it is called. */
export function once(release: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => (done ??= release());
}
