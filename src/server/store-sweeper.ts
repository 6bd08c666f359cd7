import type { RunCoordinator } from "../coordination/run-coordinator.js";
import type { ConversationStore, PurgeResult, ReleasedThread } from "../store/conversation-store.js";
import { withDeadline } from "../util/deadline.js";
import { SweepTimer } from "./sweep-timer.js";

/** The key of the store sweep's own lease: one sweep at a time across every process and host. */
const STORE_SWEEP_LEASE_KEY = "chat-serve:store-sweep";

interface SweepLog {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}

/**
 * Deletes the checkpoints of threads a purge released, each under the deadline; a thread that
 * cannot be deleted now is logged, and the rest go on.
 */
export async function deleteReleasedThreads(
  threads: readonly ReleasedThread[],
  deleteThread: (model: string, threadId: string) => Promise<void>,
  timeoutMs: number,
  log?: SweepLog,
): Promise<number> {
  let deleted = 0;
  for (const { model, threadId } of threads) {
    try {
      await withDeadline("the checkpoint store", timeoutMs, deleteThread(model, threadId));
      deleted += 1;
    } catch (error) {
      log?.warn({ err: error, model, thread: threadId }, "could not delete an expired thread's checkpoints; the next sweep tries again");
    }
  }
  return deleted;
}

export interface StoreSweeperOptions {
  store: ConversationStore;
  coordinator: RunCoordinator;
  /** Deletes one released thread's checkpoints (the registry's `deleteThread`). */
  deleteThread: (model: string, threadId: string) => Promise<void>;
  /** Responses, conversations and chat sessions unused for longer than this are deleted. */
  expireAfterMs: number;
  sweepEveryMs: number;
  timeoutMs: number;
  log?: SweepLog;
}

/**
 * The store's retention: on a timer, what was last used more than `expireAfter` ago is
 * deleted, with the checkpoints of the threads nothing refers to any more. Every process may
 * run one; the sweep's lease makes one sweep at a time across hosts.
 */
export class StoreSweeper {
  readonly #options: StoreSweeperOptions;
  readonly #timer: SweepTimer;

  constructor(options: StoreSweeperOptions) {
    this.#options = options;
    this.#timer = new SweepTimer(
      options.sweepEveryMs,
      () => this.sweep(),
      (error) => options.log?.warn({ err: error }, "the store sweep failed; it runs again later"),
    );
  }

  start(): void {
    this.#timer.start();
  }

  /** Stops the timer and waits for a sweep in progress. */
  stop(): Promise<void> {
    return this.#timer.stop();
  }

  /** One sweep: undefined when another process holds the sweep's lease. */
  async sweep(now = new Date()): Promise<PurgeResult | undefined> {
    const { store, coordinator, timeoutMs, log } = this.#options;
    const lease = await coordinator.tryAcquire(STORE_SWEEP_LEASE_KEY);
    if (lease === null) return undefined;
    try {
      const cutoff = new Date(now.getTime() - this.#options.expireAfterMs);
      // A purge is one statement per table: more than one call's worth of deadline.
      const result = await withDeadline("the response store", timeoutMs * 5, store.purgeOlderThan(cutoff));
      await deleteReleasedThreads(result.threads, this.#options.deleteThread, timeoutMs, log);
      const removed = result.responses + result.conversations + result.sessions;
      if (removed > 0 || result.threads.length > 0) {
        log?.info(
          { responses: result.responses, conversations: result.conversations, sessions: result.sessions, threads: result.threads.length },
          `expired ${result.responses} responses, ${result.conversations} conversations and ${result.sessions} chat sessions unused for longer than ${this.#options.expireAfterMs / 1000}s`,
        );
      }
      return result;
    } finally {
      await lease.release();
    }
  }
}
