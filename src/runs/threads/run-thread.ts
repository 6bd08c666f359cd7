import { createHash, randomUUID } from "node:crypto";
import type { RunCoordinator, RunLease } from "../../coordination/run-coordinator.js";
import { BackendUnavailableError, RunBusyError } from "../../errors/catalogue.js";
import { isServeError } from "../../errors/serve-error.js";
import type { ServableGraph } from "../../registry/servable-graph.js";
import type { ConversationStore, ThreadPoint } from "../../store/conversation-store.js";
import { withDeadline } from "../../util/deadline.js";
import type { ChatMessage } from "../../wire/request.js";
import type { AssistantOutput } from "../messages/message-out.js";
import { hashWithAnswer, historyHashes } from "./history-hash.js";

/**
 * The thread key of a conversation: hex SHA-256 of `["chat-serve.thread.v1", scope, model,
 * name]`. The scope is the server-trusted tenant, so two tenants naming their conversations
 * alike never share a thread.
 */
export function threadKey(scope: string, model: string, name: string): string {
  return createHash("sha256")
    .update(JSON.stringify(["chat-serve.thread.v1", scope, model, name]))
    .digest("hex");
}

/**
 * Which thread a run of a stateful graph goes on, as the dialect names it:
 * - `continue`: a known thread (a stored response's, a conversation's, or a new one the
 *   response will name), from the checkpoint given (a fork when it is not the latest);
 * - `session`: a chat-completions session, whose history the server matches against the
 *   turns it recorded, so the graph gets only what is new.
 */
export type ThreadRequest = { kind: "continue"; threadId: string; from?: string } | { kind: "session"; session: string };

/** The session a chat-shaped request names (`metadata.session_id`): on a stateful graph, its thread. */
export function sessionThread(request: { metadata: Record<string, string> }): ThreadRequest | undefined {
  const session = request.metadata.session_id;
  return session === undefined || session === "" ? undefined : { kind: "session", session };
}

interface Checkpointer {
  getTuple(config: object): Promise<{ config?: { configurable?: { checkpoint_id?: string } } } | undefined>;
  deleteThread?(threadId: string): Promise<void>;
}

export interface ThreadBackends {
  coordinator: RunCoordinator;
  store: ConversationStore;
  timeoutMs: number;
  /** The thread's lease expires this soon after its holder stops renewing it (a background run's). */
  leaseTtlMs?: number | undefined;
}

async function backend<T>(what: string, timeoutMs: number, operation: () => Promise<T>): Promise<T> {
  try {
    return await withDeadline(`the ${what}`, timeoutMs, operation());
  } catch (error) {
    if (isServeError(error)) throw error;
    throw new BackendUnavailableError(`The ${what} is unavailable; retry shortly.`, { cause: error });
  }
}

/** How a session's recorded turn is matched: its history's length and hash, and the history's own hashes. */
interface SessionMatch {
  key: string;
  owner: { scope: string; model: string };
  /** Hash of the whole history the client sent, before the answer. */
  historyHash: string;
  historyLength: number;
}

/**
 * The thread one run of a stateful graph goes on: which thread and from which checkpoint,
 * the lease that keeps a second turn off it, and, for a chat session, the turn to record.
 * An ephemeral thread (a request that names no conversation) is deleted when the run ends.
 */
export class RunThread {
  /** Where the run ended, once `settle` has read it. */
  point: ThreadPoint | undefined;

  private constructor(
    public id: string,
    public from: string | undefined,
    private readonly checkpointer: Checkpointer,
    private readonly lease: RunLease | undefined,
    readonly ephemeral: boolean,
    private readonly session: SessionMatch | undefined,
    private readonly backends: ThreadBackends | undefined,
  ) {}

  /** A fresh thread for one run, deleted at its end. */
  static ephemeral(graph: ServableGraph): RunThread {
    return new RunThread(
      `chat-serve.ephemeral.${randomUUID()}`,
      undefined,
      graph.checkpointer as Checkpointer,
      undefined,
      true,
      undefined,
      undefined,
    );
  }

  /**
   * Opens the thread a request names: takes its lease (409 `run_busy` while another turn runs
   * on it) and, for a session, finds the longest recorded turn the history agrees with. The
   * messages returned are what the graph is given: only those after that turn.
   */
  static async open(options: {
    graph: ServableGraph;
    request: ThreadRequest;
    scope: string;
    model: string;
    messages: ChatMessage[];
    backends: ThreadBackends;
    /** A thread of this run only (a durable background run's), deleted when it ends. */
    ephemeral?: boolean;
  }): Promise<{ thread: RunThread; messages: ChatMessage[] }> {
    const { graph, request, scope, model, messages, backends } = options;
    const leaseKey = request.kind === "continue" ? `thread:${request.threadId}` : threadKey(scope, model, `session:${request.session}`);
    const lease = await backend("run coordinator", backends.timeoutMs, () =>
      backends.coordinator.tryAcquire(leaseKey, { ttlMs: backends.leaseTtlMs }),
    );
    if (lease === null) {
      throw new RunBusyError("This conversation is already running a turn. Retry when it has finished.");
    }
    const checkpointer = graph.checkpointer as Checkpointer;
    try {
      if (request.kind === "continue") {
        const ephemeral = options.ephemeral === true;
        return { thread: new RunThread(request.threadId, request.from, checkpointer, lease, ephemeral, undefined, backends), messages };
      }
      const turns = await backend("response store", backends.timeoutMs, () => backends.store.sessionTurns(leaseKey));
      const hashes = historyHashes(messages);
      const session = { key: leaseKey, owner: { scope, model }, historyHash: hashes.at(-1)!, historyLength: messages.length };
      const match = turns.find((turn) => turn.length < messages.length && hashes[turn.length] === turn.hash);
      if (match !== undefined) {
        return {
          thread: new RunThread(match.thread.threadId, match.thread.checkpointId, checkpointer, lease, false, session, backends),
          messages: messages.slice(match.length),
        };
      }
      // A new session starts its thread; a history that agrees with no turn starts a branch of its own.
      const threadId = turns.length === 0 ? leaseKey : `${leaseKey}.${randomUUID()}`;
      return { thread: new RunThread(threadId, undefined, checkpointer, lease, false, session, backends), messages };
    } catch (error) {
      await lease.release();
      throw error;
    }
  }

  /** Fires when the thread's lease is lost: another worker may run on it now. */
  get signal(): AbortSignal | undefined {
    return this.lease?.signal;
  }

  /**
   * For a run a worker takes over: whether the thread holds steps of it to go on from, and if
   * so, the run continues from the thread's latest checkpoint. A conversation's thread has
   * them when its latest checkpoint has steps still to run (the run's input was written); a
   * thread of the run's own, as soon as it has a checkpoint.
   */
  async takeOver(graph: ServableGraph, timeoutMs: number): Promise<boolean> {
    const state = (await backend("checkpoint store", timeoutMs, () => graph.getState!({ configurable: { thread_id: this.id } }))) as {
      next?: readonly string[];
      config?: { configurable?: { checkpoint_id?: string } };
    };
    const exists = state?.config?.configurable?.checkpoint_id !== undefined;
    const resumes = this.ephemeral ? exists : (state?.next?.length ?? 0) > 0;
    if (resumes) this.from = undefined;
    return resumes;
  }

  /** Records the turn on another thread of the conversation: the one a resumed run paused on. */
  follow(threadId: string): void {
    this.id = threadId;
  }

  /** The `configurable` of the run: its thread, and the checkpoint it continues from. */
  get configurable(): { thread_id: string; checkpoint_id?: string } {
    return this.from === undefined ? { thread_id: this.id } : { thread_id: this.id, checkpoint_id: this.from };
  }

  /**
   * After a run that finished: reads the checkpoint it ended on and, for a session, records
   * the turn (the history with this answer), so the next request continues from here.
   */
  async settle(output: AssistantOutput): Promise<void> {
    if (this.ephemeral || this.backends === undefined) return;
    const { timeoutMs, store } = this.backends;
    const tuple = await backend("checkpoint store", timeoutMs, () => this.checkpointer.getTuple({ configurable: { thread_id: this.id } }));
    const checkpointId = tuple?.config?.configurable?.checkpoint_id;
    if (checkpointId === undefined) return;
    this.point = { threadId: this.id, checkpointId };
    const session = this.session;
    if (session !== undefined) {
      await backend("response store", timeoutMs, () =>
        store.addSessionTurn(session.key, session.owner, {
          length: session.historyLength + 1,
          hash: hashWithAnswer(session.historyHash, output),
          thread: this.point!,
        }),
      );
    }
  }

  /** Releases the lease and deletes an ephemeral thread (best effort: the answer has been given). */
  async end(
    timeoutMs: number,
    log?: { warn(object: Record<string, unknown>, message: string): void },
    options: { keepThread?: boolean } = {},
  ): Promise<void> {
    await this.lease?.release();
    if (!this.ephemeral || options.keepThread === true || typeof this.checkpointer.deleteThread !== "function") return;
    try {
      await withDeadline("the checkpoint store", timeoutMs, this.checkpointer.deleteThread(this.id));
    } catch (error) {
      log?.warn({ err: error, thread: this.id }, "could not delete a run's temporary thread");
    }
  }
}
