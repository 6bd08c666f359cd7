import { randomUUID } from "node:crypto";
import type { ServableGraph } from "../registry/servable-graph.js";
import { withDeadline } from "../util/deadline.js";

interface ThreadDeleter {
  deleteThread(threadId: string): Promise<void>;
}

/**
 * A thread for one run of a graph compiled with a checkpointer of its own (as LangGraph's
 * tutorials compile them): LangGraph needs a `thread_id` to run such a graph at all. Without a
 * conversation to continue, the run gets a fresh thread, and `end()` deletes it when the run is
 * over, so a checkpointed graph answers statelessly and its checkpointer does not grow.
 */
export class EphemeralThread {
  readonly id = `chat-serve.ephemeral.${randomUUID()}`;

  private constructor(private readonly saver: ThreadDeleter | undefined) {}

  /** The thread a run of `graph` needs, or undefined for a graph without a checkpointer. */
  static for(graph: ServableGraph): EphemeralThread | undefined {
    const saver = graph.checkpointer;
    if (typeof saver !== "object" || saver === null) return undefined;
    const deleter = typeof (saver as Partial<ThreadDeleter>).deleteThread === "function" ? (saver as ThreadDeleter) : undefined;
    return new EphemeralThread(deleter);
  }

  /**
   * Deletes the thread's checkpoints, within the backend deadline. Best effort: the answer has
   * been given; a checkpointer that cannot delete it now leaves a thread nothing will read.
   */
  async end(timeoutMs: number, log?: { warn(object: Record<string, unknown>, message: string): void }): Promise<void> {
    if (this.saver === undefined) return;
    try {
      await withDeadline("the checkpoint store", timeoutMs, this.saver.deleteThread(this.id));
    } catch (error) {
      log?.warn({ err: error, thread: this.id }, "could not delete a run's temporary thread");
    }
  }
}
