import { Command } from "@langchain/langgraph";
import type { PausedThread, PendingRunIndex } from "../../coordination/pending-run-index.js";
import type { RunCoordinator, RunLease } from "../../coordination/run-coordinator.js";
import { BackendUnavailableError, InterruptStateConflictError, InvalidResumeError, RunBusyError } from "../../errors/catalogue.js";
import { isServeError } from "../../errors/serve-error.js";
import type { ServableGraph } from "../../registry/servable-graph.js";
import { timed } from "../../util/backend-timing.js";
import { withDeadline } from "../../util/deadline.js";
import type { ChatCompletionRequest } from "../../wire/request.js";
import type { AssistantOutput } from "../messages/message-out.js";
import { agentInboxRequest, humanResponsesFor } from "./agent-inbox.js";
import { checkpointKey, resolveRunId } from "./checkpoint-key.js";
import { encodeBatch, type InterruptBatch, stateToken, toolCallIdOf } from "./interrupt-codec.js";
import { type ResumeAnswer, readResume } from "./resume-request.js";
import { isToolError, markerReply } from "./spoken-interrupts.js";

export interface InterruptBackends {
  coordinator: RunCoordinator;
  pendingRuns: PendingRunIndex;
  /** Deadline of each backend call, whatever the backend's own settings. */
  timeoutMs: number;
  /** The run's lease expires this soon after its holder stops renewing it (a background run's). */
  leaseTtlMs?: number | undefined;
}

interface StateSnapshotLike {
  next?: readonly string[];
  config?: { configurable?: { checkpoint_id?: string } };
  tasks?: { interrupts?: { id?: string; value?: unknown }[] }[];
}

/**
 * One backend call under the deadline; any failure is `backend_unavailable`. `late` cleans up
 * after a call that succeeds only once its caller has stopped waiting (a lease taken late).
 */
async function backend<T>(what: string, timeoutMs: number, operation: () => Promise<T>, late?: (value: T) => void): Promise<T> {
  const pending = operation();
  try {
    return await withDeadline(`the ${what}`, timeoutMs, pending);
  } catch (error) {
    if (late !== undefined) pending.then(late, () => {});
    if (isServeError(error)) throw error;
    throw new BackendUnavailableError(`The ${what} is unavailable; retry shortly.`, { cause: error });
  }
}

/** A thread, at its latest checkpoint or at the one given. */
function threadConfig(threadId: string, checkpointId?: string) {
  return { configurable: checkpointId === undefined ? { thread_id: threadId } : { thread_id: threadId, checkpoint_id: checkpointId } };
}

/** The durable state of a run: whether a checkpoint exists and its pending batch, if any. */
async function readDurableState(
  graph: ServableGraph,
  threadId: string,
  timeoutMs: number,
  at?: string,
): Promise<{ exists: boolean; batch: InterruptBatch | undefined; checkpointId?: string; stepsLeft?: boolean }> {
  const snapshot = (await backend("checkpoint store", timeoutMs, () => graph.getState!(threadConfig(threadId, at)))) as StateSnapshotLike;
  const checkpointId = snapshot?.config?.configurable?.checkpoint_id;
  if (checkpointId === undefined) return { exists: false, batch: undefined };
  const stepsLeft = (snapshot.next?.length ?? 0) > 0;
  const interrupts = (snapshot.tasks ?? [])
    .flatMap((task) => task.interrupts ?? [])
    .filter((interrupt): interrupt is { id: string; value: unknown } => typeof interrupt.id === "string");
  return { exists: true, checkpointId, stepsLeft, batch: interrupts.length === 0 ? undefined : { checkpointId, interrupts } };
}

async function deleteCheckpoint(graph: ServableGraph, key: string, timeoutMs: number): Promise<void> {
  const saver = graph.checkpointer as { deleteThread(threadId: string): Promise<void> };
  await backend("checkpoint store", timeoutMs, () => saver.deleteThread(key));
}

/** How an interrupt run begins: a fresh start, a resume with the answers, or a replay of its batch. */
export type InterruptStart =
  | { kind: "start"; input: unknown }
  | { kind: "resume"; input: Command }
  | { kind: "replay"; batch: InterruptBatch };

/**
 * The interrupt side of one run, resolved before any response byte is sent. It owns what the
 * run needs from the durable side (its graph, model, lease and backends) and ends it one way:
 * settled (a batch kept, or the finished run's checkpoint deleted), abandoned (the checkpoint
 * deleted after a failure or a disconnect) or failed.
 */
export class InterruptRun {
  /** On a conversation's thread: where the run stopped (paused or finished), once settled. */
  point: PausedThread | undefined;
  /**
   * Its pause is told in text (`spokenBatch`), answered by the client's next message: the client
   * asks for it, answered a question told so, or answered a call with an error.
   */
  spoken = false;

  constructor(
    readonly runId: string,
    readonly key: string,
    readonly lease: RunLease,
    readonly start: InterruptStart,
    private readonly graph: ServableGraph,
    private readonly model: string,
    private readonly backends: InterruptBackends,
    private readonly scope: string,
    /** A conversation's thread (kept when the run ends), and the checkpoint the run goes on from; absent: the run's own thread. */
    readonly thread?: { threadId: string; from?: string },
  ) {}

  /** The `configurable` of the run: its own thread, or the conversation's from where it goes on. */
  get configurable(): { thread_id: string; checkpoint_id?: string } {
    if (this.thread === undefined) return { thread_id: this.key };
    return this.thread.from === undefined
      ? { thread_id: this.thread.threadId }
      : { thread_id: this.thread.threadId, checkpoint_id: this.thread.from };
  }

  /**
   * After the graph has run: a pending batch is kept (and indexed) and returned as the
   * assistant turn; a finished run has its checkpoint and index entry deleted.
   */
  async settle(): Promise<AssistantOutput | undefined> {
    const { pendingRuns, timeoutMs } = this.backends;
    const threadId = this.thread?.threadId ?? this.key;
    const { batch, checkpointId } = await readDurableState(this.graph, threadId, timeoutMs);
    if (this.thread !== undefined && checkpointId !== undefined) this.point = { threadId, checkpointId };
    if (batch !== undefined) {
      const output = batchOutput(this.runId, batch);
      await backend("pending-run index", timeoutMs, () =>
        pendingRuns.record({
          key: this.key,
          model: this.model,
          runId: this.runId,
          scope: this.scope,
          ...(this.point === undefined ? {} : { thread: this.point }),
        }),
      );
      return output;
    }
    // A conversation's thread stays: the next turn goes on from here.
    if (this.thread === undefined) await deleteCheckpoint(this.graph, this.key, timeoutMs);
    await backend("pending-run index", timeoutMs, () => pendingRuns.remove(this.key));
    return undefined;
  }

  #kept = false;

  /** A run handed to another worker, which goes on from its checkpoint: `abandon` leaves it. */
  keep(): void {
    this.#kept = true;
  }

  /**
   * A run that failed or was cancelled: its checkpoint and index entry are deleted, best
   * effort. Not when the lease was lost, since another holder may own the run now.
   */
  async abandon(): Promise<void> {
    if (this.lease.signal.aborted || this.#kept) return;
    const { pendingRuns, timeoutMs } = this.backends;
    await Promise.allSettled([
      // A conversation's thread keeps its turns; the failed one is a branch nothing continues.
      ...(this.thread === undefined ? [deleteCheckpoint(this.graph, this.key, timeoutMs)] : []),
      backend("pending-run index", timeoutMs, () => pendingRuns.remove(this.key)),
    ]);
  }

  /** The error the run failed with, as the client should see it: a lost lease is a backend outage. */
  failure(error: unknown): unknown {
    if (!this.lease.signal.aborted || isServeError(error)) return error;
    return new BackendUnavailableError("This run lost its lease to the run coordinator and was stopped; retry it.", {
      cause: error,
    });
  }
}

/**
 * How a request resumes a run without replaying its tool calls: the answers by tool call
 * (the Responses API's `previous_response_id`), or one reply a person typed (the `chat-ui`
 * profile), which `replyAnswers` spreads over the pending batch.
 */
export type ResumeOf =
  | { runId: string; stateToken?: string; answers: ResumeAnswer[] }
  | { runId: string; stateToken: string; reply: string };

/**
 * A person's reply as the answers of a batch. One interrupt: the reply. Several: lines
 * numbered like the questions (\`1: yes\`, \`2) no\`) answer each; a reply without numbers
 * answers every one of them.
 */
function replyAnswers(batch: InterruptBatch, reply: string): ResumeAnswer[] {
  const { interrupts } = batch;
  if (interrupts.length === 1) return [{ toolCallId: toolCallIdOf(interrupts[0]!.id), value: reply }];
  const numbered = new Map<number, string>();
  for (const line of reply.split("\n")) {
    const match = /^\s*(\d+)\s*[:.)]\s*(.*)$/u.exec(line);
    if (match !== null) numbered.set(Number(match[1]), match[2]!.trim());
  }
  if (numbered.size > 0 && interrupts.some((_interrupt, index) => !numbered.has(index + 1))) {
    throw new InvalidResumeError(
      `There are ${interrupts.length} questions: answer each on its own line, numbered 1 to ${interrupts.length}.`,
    );
  }
  return interrupts.map((interrupt, index) => ({
    toolCallId: toolCallIdOf(interrupt.id),
    value: numbered.size === 0 ? reply : numbered.get(index + 1)!,
  }));
}

/**
 * Resolves the run ID and checkpoint key, takes the lease (409 `run_busy` when held), and
 * decides from durable state whether this request starts, resumes or replays the run.
 * Every refusal happens here, before any response byte; the lease is released on refusal.
 */
export async function prepareInterruptRun(options: {
  model: string;
  graph: ServableGraph;
  request: ChatCompletionRequest;
  scope: string;
  /** Builds the graph input; called only when the run starts (a resume's input is the answers). */
  input: () => Promise<unknown>;
  backends: InterruptBackends;
  /**
   * A resume that names its run directly (the Responses API's `previous_response_id`): the
   * answers must match the run's pending batch, whichever batch that is.
   */
  resumeOf?: ResumeOf;
  /**
   * A stateful graph's conversation thread: a new run starts on it (from `from`), and a
   * resume finds the thread its run paused on in the pending-run index.
   */
  thread?: { threadId: string; from?: string };
  /** The graph is stateful: a resume may belong to a run paused on a conversation's thread. */
  stateful?: boolean;
  /**
   * A run another worker took over (its worker died): when its thread has steps still to run
   * and no pending interrupts, it goes on from its latest checkpoint with no input; when it
   * had paused, the pause is given again.
   */
  takeOver?: boolean;
}): Promise<InterruptRun> {
  const { model, request, scope } = options;
  const supplied = request.metadata.graph_run_id;
  // A reply after a question told in text is a resume too: the marker names the run.
  const resume: ResumeOf | undefined = options.resumeOf ?? readResume(request.messages, supplied) ?? markerReply(request.messages);
  const runId = resume?.runId ?? resolveRunId(supplied);
  const key = checkpointKey(scope, model, runId);
  const { backends } = options;
  const lease = await backend(
    "run coordinator",
    backends.timeoutMs,
    () => timed("lease", "acquire", () => backends.coordinator.tryAcquire(key, { ttlMs: backends.leaseTtlMs })),
    (late) => void late?.release().catch(() => {}),
  );
  if (lease === null) throw new RunBusyError();
  try {
    const run = await decideStart(options, resume, runId, key, lease);
    if (options.request.interruptsAsText === true || (resume !== undefined && "reply" in resume)) run.spoken = true;
    return run;
  } catch (error) {
    await lease.release();
    throw error;
  }
}

/** From durable state: whether the run starts, resumes or replays its batch; every refusal is thrown. */
async function decideStart(
  options: Parameters<typeof prepareInterruptRun>[0],
  resume: ResumeOf | undefined,
  runId: string,
  key: string,
  lease: RunLease,
): Promise<InterruptRun> {
  const { model, graph, scope, backends } = options;
  let paused: PausedThread | undefined;
  if (options.stateful === true && resume !== undefined) {
    paused = (await backend("pending-run index", backends.timeoutMs, () => backends.pendingRuns.get(key)))?.thread;
  }
  if (options.takeOver === true) {
    const threadId = paused?.threadId ?? options.thread?.threadId;
    const state = await readDurableState(graph, threadId ?? key, backends.timeoutMs);
    const on = threadId === undefined ? undefined : { threadId };
    if (state.batch === undefined && state.stepsLeft === true) {
      return new InterruptRun(runId, key, lease, { kind: "start", input: null }, graph, model, backends, scope, on);
    }
    if (state.batch !== undefined && resume === undefined && threadId === undefined) {
      return new InterruptRun(runId, key, lease, { kind: "replay", batch: state.batch }, graph, model, backends, scope);
    }
  }
  if (options.thread !== undefined && resume === undefined) {
    // A new turn on a conversation's thread: nothing of this run exists yet.
    const input = { kind: "start" as const, input: await options.input() };
    return new InterruptRun(runId, key, lease, input, graph, model, backends, scope, options.thread);
  }
  const durable =
    paused === undefined
      ? await readDurableState(graph, key, backends.timeoutMs)
      : await readDurableState(graph, paused.threadId, backends.timeoutMs, paused.checkpointId);
  if (resume !== undefined) {
    const { batch } = durable;
    if (batch === undefined) {
      const entry = await backend("pending-run index", backends.timeoutMs, () => backends.pendingRuns.get(key));
      if (entry?.expiredAt !== undefined) {
        throw new InterruptStateConflictError(
          `This run expired: it waited for an answer longer than this server keeps pending runs, and was deleted on ${entry.expiredAt.toISOString()}. Start the conversation again.`,
        );
      }
      throw new InterruptStateConflictError(
        "This run has no pending interrupts: it has finished, never existed, or belongs to another scope.",
      );
    }
    if (resume.stateToken !== undefined && stateToken(batch) !== resume.stateToken) {
      throw new InterruptStateConflictError("These answers are for an earlier batch of interrupts; answer the latest one.");
    }
    const answers = "reply" in resume ? replyAnswers(batch, resume.reply) : resume.answers;
    const pending = new Map(batch.interrupts.map((interrupt) => [toolCallIdOf(interrupt.id), interrupt.id]));
    const answered = answers.map((answer) => answer.toolCallId);
    if (answered.length !== pending.size || answered.some((id) => !pending.has(id))) {
      throw new InterruptStateConflictError("The answered tool calls do not match the pending interrupts of this run.");
    }
    // A client that has no graph_interrupt tool answered with its error: nobody has answered,
    // so nothing resumes; the question is asked again, in text.
    if (answers.some((answer) => isToolError(answer.value))) {
      const again = new InterruptRun(runId, key, lease, { kind: "replay", batch }, graph, model, backends, scope);
      again.spoken = true;
      return again;
    }
    // An Agent Inbox request takes its answer as the `HumanResponse[]` it reads, whatever the surface asked in.
    const payloads = new Map(batch.interrupts.map((interrupt) => [interrupt.id, interrupt.value]));
    const resumeMap = Object.fromEntries(
      answers.map((answer) => {
        const id = pending.get(answer.toolCallId)!;
        const inbox = agentInboxRequest(payloads.get(id));
        return [id, inbox === undefined ? answer.value : humanResponsesFor(inbox, answer.value)];
      }),
    );
    return new InterruptRun(
      runId,
      key,
      lease,
      { kind: "resume", input: new Command({ resume: resumeMap }) },
      graph,
      model,
      backends,
      scope,
      paused === undefined ? undefined : { threadId: paused.threadId, from: paused.checkpointId },
    );
  }
  if (durable.batch !== undefined)
    return new InterruptRun(runId, key, lease, { kind: "replay", batch: durable.batch }, graph, model, backends, scope);
  // A checkpoint without pending interrupts is left over from a crashed run: start afresh.
  if (durable.exists) await deleteCheckpoint(graph, key, backends.timeoutMs);
  return new InterruptRun(runId, key, lease, { kind: "start", input: await options.input() }, graph, model, backends, scope);
}

/** The assistant turn that carries a batch: one `graph_interrupt` call per interrupt. */
export function batchOutput(runId: string, batch: InterruptBatch): AssistantOutput {
  return { text: "", toolCalls: encodeBatch(runId, batch), annotations: [], finishReason: "tool_calls" };
}
