import type { RunCoordinator } from "../../coordination/run-coordinator.js";
import type { AgentRecords } from "../../store/agent-records.js";
import { backendCall } from "./agent-run-config.js";

/** The deployment's thread time to live (`checkpointer.ttl`): the default, and how often threads are swept. */
export interface ThreadTtl {
  /** What happens to a thread past its time (its own `ttl`'s strategy wins): deleted, or cut to its latest checkpoint. Default delete. */
  strategy?: "delete" | "keep_latest";
  /** Minutes a thread may stay idle when it names no `ttl` of its own; none: only those that do expire. */
  defaultMinutes?: number;
  sweepIntervalMs: number;
}

/** Threads one sweep looks at, at most: the rest wait for the next. */
const SWEEP_BATCH = 500;
/** One sweep at a time in the deployment: the process holding this lease sweeps, the others skip that round. */
const SWEEP_LEASE = "agent-thread-ttl-sweep";

/**
 * Sweeps the threads idle past their time to live, oldest first, as one process of the
 * deployment at a time: a thread is swept once. `delete` takes a thread with its runs and
 * checkpoints, as a `DELETE /threads/{id}` does; `keep_latest` cuts its checkpoints to the
 * latest, and the thread is swept again only once it has changed. A busy thread waits for the
 * next sweep. Resolves to how many were swept.
 */
export async function sweepExpiredThreads(options: {
  records: AgentRecords;
  coordinator: RunCoordinator;
  ttl: ThreadTtl;
  backendTimeoutMs: number;
  deleteThread: (scope: string, threadId: string) => Promise<void>;
  /** Cuts a thread's checkpoints to its latest; false when its checkpointer cannot. */
  keepLatest: (scope: string, threadId: string) => Promise<boolean>;
  warn: (error: unknown, threadId: string) => void;
  now?: Date;
}): Promise<number> {
  const { records, coordinator, ttl, backendTimeoutMs } = options;
  const lease = await backendCall("the run coordinator", backendTimeoutMs, () => coordinator.tryAcquire(SWEEP_LEASE));
  if (lease === null) return 0;
  try {
    const now = options.now ?? new Date();
    const expired = await backendCall("the thread records", backendTimeoutMs, () =>
      records.expiredThreads(now, ttl.defaultMinutes, SWEEP_BATCH),
    );
    let swept = 0;
    for (const thread of expired) {
      if (lease.signal.aborted) break;
      if (thread.status === "busy") continue;
      try {
        if ((thread.ttl_strategy ?? ttl.strategy) === "keep_latest") {
          if (!(await options.keepLatest(thread.scope, thread.thread_id))) {
            throw new Error(
              "its checkpointer cannot keep only the latest checkpoint (or its graph keeps delta channels); it keeps them all",
            );
          }
        } else await options.deleteThread(thread.scope, thread.thread_id);
        swept += 1;
      } catch (error) {
        options.warn(error, thread.thread_id);
      }
    }
    return swept;
  } finally {
    await lease.release().catch(() => {});
  }
}
