import { setTimeout } from "node:timers/promises";
import type { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { v7 as uuid7, validate as validateUuid } from "@langchain/core/utils/uuid";
import { BaseCheckpointSaver, Command } from "@langchain/langgraph";
import { AgentInvalidBodyError, AgentNotFoundError, InternalError } from "../../errors/catalogue.js";
import { toServeError } from "../../errors/to-serve-error.js";
import type { AgentRecords, AgentRunRecord, AgentThreadRecord } from "../../store/agent-records.js";
import { TenantStore } from "../../store/tenant-store.js";
import { EventLoopTurns } from "../../util/event-loop-turns.js";
import { UsageCollector } from "../usage.js";
import { type AgentGraph, interruptsOf, protocolJsonInTurns } from "./agent-graph.js";
import { type AgentRunRequest, type Backend, checkpointThreadId, deleteCheckpoints, runnableConfigOf } from "./agent-run-config.js";
import type { AgentRunsOptions } from "./agent-runs-options.js";
import { agentStreamEvents } from "./agent-stream.js";
import { assistantIdOf } from "./assistants.js";
import { assertReadableMessages } from "./input-messages.js";
import type { ProtocolSink, RunProtocolEvent } from "./protocol-sink.js";
import type { RunEvents } from "./run-events.js";

/** A run this process executes, from its creation to a while after its end. */
export interface LiveRun {
  record: AgentRunRecord;
  events: RunEvents;
  controller: AbortController;
  /** Settles when the run has ended, whatever the way. */
  done: Promise<void>;
  /** The state's values when the run ended (or the error it ended with). */
  result?: unknown;
  /** Why it was cancelled, when it was. */
  cancelled?: "interrupt" | "rollback";
  /** When it started running (after its turn and its `after_seconds`), for its webhook. */
  startedAt?: string;
}

/**
 * Checks a run's request and finds its thread (or makes the record of a new one). Every error
 * a client can cause is thrown here, before anything is recorded or sent.
 */
export async function prepareRun(
  runs: { graphOf(assistantId: string): Promise<{ model: string; graph: AgentGraph; contextOf?: (sent: unknown) => unknown }> },
  records: AgentRecords,
  backend: Backend,
  scope: string,
  threadId: string | undefined,
  request: AgentRunRequest,
): Promise<{ model: string; graph: AgentGraph; temporary: boolean; id: string; thread: AgentThreadRecord }> {
  const { model, graph, contextOf } = await runs.graphOf(request.graphId ?? request.assistantId);
  if (contextOf !== undefined) {
    const context = contextOf(request.context);
    if (context !== undefined) request.context = context;
  }
  // With a command, the input is not read, as on LangGraph's server: agent-chat-ui and
  // CopilotKit send `input: {}` beside `command: { resume }`.
  if (request.command === undefined) assertReadableMessages(request.input, "input");
  assertReadableMessages(request.command?.update, "command.update");
  const temporary = threadId === undefined;
  const id = threadId ?? uuid7();
  let thread = temporary ? undefined : await backend("the thread records", () => records.getThread(scope, id));
  if (thread === undefined) {
    if (!temporary && request.ifNotExists !== "create") throw new AgentNotFoundError("thread", id);
    if (!validateUuid(id))
      throw new AgentInvalidBodyError(`Thread ${id.slice(0, 80)} cannot be created: a thread id must be a UUID, as LangGraph's are.`);
    const at = new Date().toISOString();
    thread = {
      thread_id: id,
      scope,
      graph_id: model,
      created_at: at,
      updated_at: at,
      state_updated_at: at,
      // A thread a run makes starts with the run's metadata, as on LangGraph's server (an auth handler's owner among it).
      metadata: { ...request.metadata },
      status: "idle",
    };
  }
  await assertOwnCheckpoint(graph, request, scope, id, backend);
  // Every run says on its thread which graph and assistant ran it, as LangGraph's server does:
  // agent-chat-ui lists a graph's threads by `metadata.graph_id`.
  const assistantId = request.graphId === undefined ? assistantIdOf(model) : request.assistantId;
  thread = { ...thread, metadata: { ...thread.metadata, graph_id: model, assistant_id: assistantId } };
  return { model, graph, temporary, id, thread };
}

/**
 * Runs the graph on the run's config, its events logged as it goes (or, for protocol v2,
 * handed to the protocol's sink); then what the run answers: the state's values, with what
 * it waits on when it paused.
 */
export async function driveGraph(
  graph: AgentGraph,
  request: AgentRunRequest,
  config: Record<string, unknown>,
  runId: string,
  events: RunEvents,
  backend: Backend,
  /** A run taken over from a worker that died: it goes on from its last checkpoint, its input already read (or has nothing left to run). */
  goesOn: TakeoverPoint,
  /** A run of protocol v2: where its events go instead. */
  protocol: ProtocolSink | undefined,
): Promise<{ result: unknown; interrupted: boolean }> {
  const input = goesOn
    ? null
    : request.command === undefined
      ? (request.input ?? null)
      : new Command(request.command as ConstructorParameters<typeof Command>[0]);
  const turns = new EventLoopTurns();
  if (goesOn === "ended") {
    // Nothing to run: its answer is the thread's state, below.
  } else if (protocol !== undefined) {
    // Protocol v2: LangGraph's own protocol events, every mode, subgraphs included.
    const stream = await graph.streamEvents(input, { ...config, version: "v3" });
    for await (const event of stream as AsyncIterable<RunProtocolEvent>) {
      protocol.event(event);
      await turns.take();
    }
  } else {
    for await (const { event, data } of agentStreamEvents({
      graph,
      input,
      config,
      modes: request.streamMode,
      subgraphs: request.subgraphs,
      runId,
    })) {
      // A large state is written in turns, so that other requests are served while it is.
      events.push(event, data, (await protocolJsonInTurns(data, turns)) ?? "null");
      // A run whose steps never wait on I/O (a large state on the in-memory checkpointer) lets other requests in between its events.
      await turns.take();
    }
  }
  const checkpointThread = (config.configurable as { thread_id: string }).thread_id;
  const state = await backend("the checkpointer", () => graph.getState({ configurable: { thread_id: checkpointThread } }));
  const interrupts = Object.values(interruptsOf(state)).flat();
  // A run that paused answers with the state and what it waits on, as LangGraph's servers do.
  return {
    result: interrupts.length === 0 ? state.values : { ...(state.values as object), __interrupt__: interrupts },
    interrupted: interrupts.length > 0 || (state.next ?? []).length > 0,
  };
}

/**
 * The run's and its thread's records once it has ended (the run's record as it now stands); a
 * temporary thread is deleted with its checkpoints, a run rolled back with its record.
 */
export async function settleRun(
  records: AgentRecords,
  backend: Backend,
  record: AgentRunRecord,
  cancelled: "interrupt" | "rollback" | undefined,
  graph: AgentGraph,
  end: { status: AgentRunRecord["status"]; threadStatus: AgentThreadRecord["status"]; failure: string | null; busy: boolean },
): Promise<AgentRunRecord> {
  const at = new Date().toISOString();
  const ended: AgentRunRecord = {
    ...record,
    status: end.status,
    updated_at: at,
    ...(cancelled === undefined ? {} : { cancel_reason: cancelled }),
  };
  if (record.temporary) {
    // Its thread goes with it; what it ended as is still the run's (its webhook says so).
    await backend("the thread records", () => records.deleteThread(record.scope, record.thread_id));
    await backend("the checkpointer", () => deleteCheckpoints(graph, checkpointThreadId(record.scope, record.thread_id)));
    return ended;
  }
  if (cancelled === "rollback") await backend("the thread records", () => records.deleteRun(record.scope, record.run_id));
  else await backend("the thread records", () => records.putRun(ended));
  const thread = await backend("the thread records", () => records.getThread(record.scope, record.thread_id));
  if (thread !== undefined) {
    await backend("the thread records", () =>
      records.putThread({
        ...thread,
        status: end.busy ? "busy" : end.threadStatus,
        updated_at: at,
        state_updated_at: at,
        error: end.failure,
      }),
    );
  }
  return ended;
}

/** The id of a thread's latest checkpoint, or null when it has none. */
async function latestCheckpoint(graph: AgentGraph, checkpointThread: string, backend: Backend): Promise<string | null> {
  const config = { configurable: { thread_id: checkpointThread, checkpoint_ns: "" } };
  // The checkpointer's own answer when there is one: the id, not a whole state snapshot built from it.
  const saver = graph.checkpointer instanceof BaseCheckpointSaver ? graph.checkpointer : undefined;
  const found =
    saver !== undefined
      ? await backend("the checkpointer", () => saver.getTuple(config))
      : await backend("the checkpointer", () => graph.getState(config));
  return (found?.config?.configurable?.checkpoint_id as string | undefined) ?? null;
}

/**
 * Whether a run taken over goes on from its thread's last checkpoint: the run had written one
 * (the thread's latest is not the one it began from) and it has steps left, none of them a
 * pending interrupt. With none left (it ran to its end or to an interrupt, and its worker went
 * before recording that), it has ended; with no checkpoint of its own, it starts again with its input.
 */
async function goesOnFromCheckpoint(
  graph: AgentGraph,
  checkpointThread: string,
  before: string | null | undefined,
  backend: Backend,
): Promise<TakeoverPoint> {
  if (before === undefined) return false;
  const state = await backend("the checkpointer", () => graph.getState({ configurable: { thread_id: checkpointThread } }));
  const latest = state.config?.configurable?.checkpoint_id ?? null;
  if (latest === before) return false;
  // Its steps all ran (to the end, or to an interrupt) before its end could be recorded: nothing runs again.
  if ((state.next?.length ?? 0) === 0 || Object.values(interruptsOf(state)).flat().length > 0) return "ended";
  return true;
}

/** Where a run begins: with its input (false), from its last checkpoint (true), or at its end, its steps all run ("ended"). */
export type TakeoverPoint = boolean | "ended";

/**
 * Where a run of the shared queue begins. Its first attempt records the thread's checkpoint in
 * the run's record (for a worker that may take it over) and starts with its input; a takeover
 * goes on from the run's last checkpoint when it wrote one (`goesOnFromCheckpoint`): true.
 */
export async function takeoverPoint(
  graph: AgentGraph,
  checkpointThread: string,
  record: AgentRunRecord,
  attempt: number | undefined,
  backend: Backend,
): Promise<TakeoverPoint> {
  if (attempt === undefined) return false;
  if (attempt === 1) {
    // A temporary thread is made for its run: it has no checkpoint before it.
    record.checkpoint_before = record.temporary ? null : await latestCheckpoint(graph, checkpointThread, backend);
    return false;
  }
  return goesOnFromCheckpoint(graph, checkpointThread, record.checkpoint_before, backend);
}

/**
 * A run's turn on its thread: once the runs before it have ended, and `afterSeconds` more
 * when it was asked to wait (a delayed run, `pending` until then). A cancel meanwhile ends the
 * wait with the signal's reason.
 */
export async function turnOf(before: readonly LiveRun[], afterSeconds: number | undefined, signal: AbortSignal): Promise<void> {
  for (const earlier of before) await earlier.done;
  if (afterSeconds !== undefined && afterSeconds > 0 && !signal.aborted) {
    await setTimeout(afterSeconds * 1000, undefined, { signal }).catch(() => {});
  }
  if (signal.aborted) throw signal.reason;
}

/**
 * A run from a checkpoint (time travel, a fork: `checkpoint_id`, `checkpoint`, or protocol v2's
 * `forkFrom` in `config.configurable`) must name one of its own thread's: another thread's, or
 * none at all, would start it from an empty state without a word. The client's 422 otherwise.
 */
async function assertOwnCheckpoint(
  graph: AgentGraph,
  request: AgentRunRequest,
  scope: string,
  threadId: string,
  backend: Backend,
): Promise<void> {
  const configurable = request.config.configurable ?? {};
  const checkpointId = request.checkpoint?.checkpoint_id ?? configurable.checkpoint_id;
  if (typeof checkpointId !== "string" || checkpointId === "") return;
  const namespace = request.checkpoint?.checkpoint_ns ?? configurable.checkpoint_ns ?? "";
  const saver = graph.checkpointer as BaseCheckpointSaver | undefined;
  if (saver === undefined || typeof saver.getTuple !== "function") return;
  const config = {
    configurable: { thread_id: checkpointThreadId(scope, threadId), checkpoint_ns: namespace, checkpoint_id: checkpointId },
  };
  const found = await backend("the checkpointer", () => saver.getTuple(config));
  if (found === undefined)
    throw new AgentInvalidBodyError(`checkpoint_id: thread ${threadId} has no checkpoint ${checkpointId.slice(0, 80)}.`);
}

/**
 * What a failed run reports (`{ error, message }`): chat-serve's own errors and a graph's
 * UserFacingError as they are, a provider's failure as a sentence of ours, anything else
 * generic; while developing (`showGraphErrors`: a loopback server without keys), a graph's own
 * exception as its name and message.
 */
export function reportedFailure(error: unknown, showGraphErrors: boolean): { name: string; message: string } {
  const serveError = toServeError(error);
  if (showGraphErrors && serveError instanceof InternalError && error instanceof Error) {
    return { name: error.name, message: error.message.split("\n")[0] ?? error.message };
  }
  return serveError;
}

/**
 * The runnable config of one execution of a run: its callbacks (tracing, and the usage it
 * reports when usage is counted), every step checkpointed before the next on the shared queue
 * (a takeover goes on from there), and the server's store as the run's tenant sees it (a graph
 * compiled with a store of its own keeps it).
 */
export async function executionConfig(
  options: Pick<AgentRunsOptions, "registry" | "tracing" | "onUsage">,
  run: {
    request: AgentRunRequest;
    record: AgentRunRecord;
    model: string;
    graph: AgentGraph;
    checkpointThread: string;
    job: { attempt: number } | undefined;
    signal: { signal: AbortSignal };
  },
): Promise<{ config: Record<string, unknown>; usage: UsageCollector | undefined }> {
  const callbacks: BaseCallbackHandler[] = options.tracing === undefined ? [] : [await options.tracing.handler()];
  const usage = options.onUsage === undefined ? undefined : new UsageCollector();
  if (usage !== undefined) callbacks.push(usage);
  const { request, record, job } = run;
  const durable = job === undefined || request.durability !== undefined ? request : { ...request, durability: "sync" as const };
  const config = runnableConfigOf(durable, {
    runId: record.run_id,
    threadId: record.thread_id,
    checkpointThread: run.checkpointThread,
    model: run.model,
    assistantId: record.assistant_id,
    attempt: job?.attempt ?? 1,
    callbacks,
    signal: run.signal.signal,
  });
  const { graphStore } = options.registry;
  if ((run.graph as { store?: unknown }).store === graphStore) config.store = TenantStore.of(graphStore, record.scope);
  return { config, usage };
}
