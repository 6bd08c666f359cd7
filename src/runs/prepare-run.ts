import type { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { GraphConfigurationError, UnsupportedParameterError } from "../errors/catalogue.js";
import type { ToolEventsSetting } from "../events/tool-events.js";
import { GraphFeature } from "../registry/features.js";
import type { GraphConfig } from "../registry/graph-config.js";
import type { GraphRegistry } from "../registry/graph-registry.js";
import type { ServableGraph } from "../registry/servable-graph.js";
import { type RunCaller, resolveRuntimeContext } from "../settings/runtime-context.js";
import { TenantStore } from "../store/tenant-store.js";
import { anySignal } from "../util/any-signal.js";
import { DEFAULT_BACKEND_TIMEOUT_MS } from "../util/deadline.js";
import type { ChatCompletionRequest } from "../wire/request.js";
import { type InterruptRun, prepareInterruptRun, type ResumeOf } from "./interrupts/interrupt-run.js";
import { toLangChainMessages } from "./messages/messages-in.js";
import { buildRunConfig } from "./run-config.js";
import { RunThread, type ThreadRequest } from "./threads/run-thread.js";
import { type ClientFlow, UsageCollector } from "./usage.js";

const DEFAULT_SCOPE = "default";

/** Whether a graph was compiled with a store of its own (`compile({ store })`). */
function hasStore(graph: object): boolean {
  const store = (graph as { store?: unknown }).store;
  return typeof store === "object" && store !== null;
}

async function resolveScope(scope: (() => Promise<string>) | undefined): Promise<string> {
  const value = scope === undefined ? DEFAULT_SCOPE : await scope();
  if (typeof value !== "string" || value.length === 0) {
    throw new GraphConfigurationError("checkpointScope must return a non-empty string.");
  }
  return value;
}

/**
 * A graph whose state has no `messages` (and whose config builds no input of its own) has no
 * conversation to take: refused before it runs, saying what to set, instead of failing inside it.
 */
function assertTakesMessages(model: string, config: GraphConfig, graph: object): void {
  if (config.requestToInput !== undefined) return;
  const channels = (graph as { channels?: Record<string, unknown> }).channels;
  if (channels === undefined || Object.hasOwn(channels, "messages")) return;
  throw new GraphConfigurationError(
    `Model '${model}' has no 'messages' key in its state, so this API has no conversation to give it: set graphs.${model}.requestToInput in chat-serve.config.ts to build its input from the request (the Agent Protocol serves it as it is).`,
  );
}

/**
 * A graph answers in JSON only when it says it does: asking another for JSON is refused
 * before it runs, never answered with text that pretends.
 */
function assertFormatHonoured(request: ChatCompletionRequest, config: GraphConfig): void {
  const format = request.parameters.responseFormat?.type;
  if (format === undefined || format === "text" || config.structuredOutput) return;
  throw new UnsupportedParameterError(
    `Model '${request.model}' answers in text and cannot honour a ${format} format; leave the format out, or serve a graph registered with structuredOutput: true.`,
    { param: request.response_format == null ? "text.format" : "response_format" },
  );
}

/** The logging the runs need; a pino logger fits. */
export interface RunLogger {
  warn(object: Record<string, unknown>, message: string): void;
}

/** What the HTTP layer knows about the request that the run needs. */
export interface RunRequestContext {
  requestId: string;
  signal: AbortSignal;
  log?: RunLogger;
  /** Added to every run beside the graph's own callbacks when tracing is on. */
  tracing?: { handler(): Promise<BaseCallbackHandler> };
  /** The server-trusted checkpoint scope; resolved only for interrupt graphs. */
  scope?: () => Promise<string>;
  /** Deadline of each lease, checkpoint and index call (default 2 s). */
  backendTimeoutMs?: number;
  /** A resume that names its run directly rather than by replaying the calls. */
  resumeOf?: ResumeOf;
  /** Who is calling, handed to the context factory: the tenant when the server authenticates. */
  caller?: RunCaller;
  /**
   * The scope of the store a graph reads (`config.store`), when it is not the run's scope: a
   * project's `Auth` users share the Agent Protocol's (`default`), whatever their tenant.
   */
  storeScope?: string;
  /** The conversation the request continues, for a stateful graph; absent: a fresh thread, deleted at the end. */
  thread?: ThreadRequest;
  /**
   * A run that must survive its worker (a background run on a shared queue with a durable
   * checkpointer): a graph with no conversation runs on this thread, with the server's
   * checkpointer, deleted at the end; with `resume`, the run goes on from the last step its
   * thread completed (a worker took it over), when there is one.
   */
  durable?: { threadId: string; resume: boolean };
  /**
   * The run's leases expire this soon after their holder stops renewing them (a background run:
   * the queue's takeover time, so a worker that takes the run over does not wait for them).
   */
  leaseTtlMs?: number;
  /** The profile's default for automatic tool statuses when the model sets none (the `chat-ui` profile: on). */
  toolEventsByDefault?: boolean;
  /** The client's backpressure: the run's models wait on it while the client's connection is full. */
  flow?: ClientFlow;
}

/** The opt-in value of `metadata.graph_stream_events` this server speaks. */
const STREAM_EVENTS_VERSION = "v1";

/** Everything one run needs, resolved before the first byte of a response is sent. */
export interface PreparedRun {
  model: string;
  config: GraphConfig;
  graph: ServableGraph;
  request: ChatCompletionRequest;
  /** The graph input of a run without interrupts; an interrupt run carries its own on `interrupt`. */
  input: unknown;
  runConfig: Record<string, unknown>;
  usage: UsageCollector;
  /** Client events go on the wire: CLIENT_EVENTS feature, `v1` opt-in, and a stream. */
  clientEvents: boolean;
  /** Automatic tool statuses to send, when client events go on the wire and the model (or the profile) wants them. */
  toolEvents?: ToolEventsSetting;
  log?: RunLogger;
  /** The interrupt side of the run, for `INTERRUPTS` graphs. */
  interrupt?: InterruptRun;
  /** The thread of a graph with a checkpointer (a stateful graph's conversation, or one for this run only). */
  thread?: RunThread;
  /**
   * Releases the run's lease, if it holds one; safe to call more than once. `keepThread`
   * keeps a durable run's thread for the worker that takes the run over.
   */
  release: (options?: { keepThread?: boolean }) => Promise<void>;
  /**
   * Told as each node of the root graph starts and finishes (AG-UI's steps), when a surface
   * sets it before streaming; nothing is streamed for it otherwise.
   */
  onStep?: (node: string, phase: "started" | "finished") => void;
}

/**
 * Resolves the model and builds graph input and runnable config. Every error a client can
 * cause is raised here, so it reaches the client as an ordinary HTTP error before any stream.
 */
export async function prepareRun(
  registry: GraphRegistry,
  request: ChatCompletionRequest,
  context: RunRequestContext,
): Promise<PreparedRun> {
  // One answer from the registry: the compiled graph and what goes with it (`streamableNodeNames:
  // "auto"` filled from the graph, whether it is stateful, its coordinator).
  const resolved = await registry.resolve(request.model);
  const { config } = resolved;
  assertFormatHonoured(request, config);
  let graph = resolved.graph;
  assertTakesMessages(request.model, config, graph);
  const runtimeContext = await resolveRuntimeContext(request.model, config, graph, request, context.caller ?? {});
  const timeoutMs = context.backendTimeoutMs ?? DEFAULT_BACKEND_TIMEOUT_MS;
  // It carries the client's backpressure too: the one handler every model already awaits.
  const usage = new UsageCollector(context.flow);
  const tracer = context.tracing === undefined ? undefined : await context.tracing.handler();
  if (context.resumeOf !== undefined && !config.features.has(GraphFeature.INTERRUPTS)) {
    throw new UnsupportedParameterError(
      `previous_response_id only answers a paused run, and model '${request.model}' has no interrupts; send the earlier items as input instead.`,
      { param: "previous_response_id" },
    );
  }
  let thread: RunThread | undefined;
  let messages = request.messages;
  const checkpointed = typeof graph.checkpointer === "object" && graph.checkpointer !== null;
  const interrupts = config.features.has(GraphFeature.INTERRUPTS);
  // A background run that another worker may have to take over checkpoints every step: on the
  // graph's own checkpointer, or on a copy of the graph with the server's.
  const durableGraph = context.durable === undefined || interrupts ? undefined : checkpointed ? graph : resolved.withServerCheckpointer();
  if (context.thread !== undefined && resolved.stateful) {
    // A stateful graph's conversation: its thread, and what is new since its last turn.
    const opened = await RunThread.open({
      graph,
      request: context.thread,
      scope: await resolveScope(context.scope),
      model: request.model,
      messages: request.messages,
      backends: { coordinator: resolved.coordinator, store: registry.store, timeoutMs, leaseTtlMs: context.leaseTtlMs },
    });
    thread = opened.thread;
    messages = opened.messages;
  } else if (durableGraph !== undefined && context.durable !== undefined) {
    graph = durableGraph;
    const opened = await RunThread.open({
      graph,
      request: { kind: "continue", threadId: context.durable.threadId },
      ephemeral: true,
      scope: await resolveScope(context.scope),
      model: request.model,
      messages: request.messages,
      backends: { coordinator: resolved.coordinator, store: registry.store, timeoutMs, leaseTtlMs: context.leaseTtlMs },
    });
    thread = opened.thread;
  } else if (checkpointed && !interrupts) {
    // A graph compiled with a checkpointer runs on a thread; without a conversation, a fresh one.
    thread = RunThread.ephemeral(graph);
  }
  const buildInput = async () => {
    const langChainMessages = toLangChainMessages(messages);
    return config.requestToInput !== undefined
      ? config.requestToInput(messages === request.messages ? request : { ...request, messages }, langChainMessages)
      : { messages: langChainMessages };
  };
  let interrupt: InterruptRun | undefined;
  if (interrupts) {
    try {
      interrupt = await prepareInterruptRun({
        model: request.model,
        graph,
        request,
        scope: await resolveScope(context.scope),
        input: buildInput,
        ...(context.resumeOf === undefined ? {} : { resumeOf: context.resumeOf }),
        ...(thread === undefined ? {} : { thread: { threadId: thread.id, ...(thread.from === undefined ? {} : { from: thread.from }) } }),
        stateful: resolved.stateful,
        ...(context.durable?.resume === true ? { takeOver: true } : {}),
        backends: {
          coordinator: config.runCoordinator!,
          pendingRuns: registry.pendingRuns,
          timeoutMs,
          leaseTtlMs: context.leaseTtlMs,
        },
      });
    } catch (error) {
      await thread?.end(timeoutMs, context.log);
      throw error;
    }
    // A resume goes on where its run paused, whichever thread that is.
    if (thread !== undefined && interrupt.thread !== undefined) thread.follow(interrupt.thread.threadId);
  }
  // Interrupt runs have their input (or their resume answers) from prepareInterruptRun. A run
  // taken over goes on from its thread's last completed step (no input: LangGraph resumes).
  let input: unknown;
  try {
    if (interrupt === undefined) {
      const resumes = context.durable?.resume === true && thread !== undefined && (await thread.takeOver(graph, timeoutMs));
      input = resumes ? null : await buildInput();
    }
  } catch (error) {
    await thread?.end(timeoutMs, context.log);
    throw error;
  }
  // An interrupt run also stops when its lease is lost.
  // A run also stops when it loses its lease (its interrupt run's, or its thread's).
  const leases = [interrupt?.lease.signal, thread?.signal].filter((signal): signal is AbortSignal => signal !== undefined);
  const runSignal = leases.length === 0 ? { signal: context.signal, dispose: () => {} } : anySignal([context.signal, ...leases]);
  const runConfig = buildRunConfig({
    requestId: context.requestId,
    model: request.model,
    runtimeCallbacks: config.runtimeCallbacks,
    serviceHandlers: tracer === undefined ? [usage] : [usage, tracer],
    traced: config.runtimeCallbacks !== undefined || tracer !== undefined,
    sessionId: request.metadata.session_id,
    signal: runSignal.signal,
    context: runtimeContext,
    operationId: interrupt?.runId,
    thread: interrupt === undefined ? thread?.configurable : interrupt.configurable,
    parameters: request.parameters,
    ...(context.caller?.authUser === undefined ? {} : { user: context.caller.authUser }),
    // A graph that reads the store gets the server's on every surface, as on the Agent Protocol (its own, when compiled with one).
    ...(hasStore(graph) ? {} : { store: TenantStore.of(registry.graphStore, context.storeScope ?? (await resolveScope(context.scope))) }),
    ...(context.durable !== undefined && (thread !== undefined || interrupt !== undefined) ? { durability: "sync" as const } : {}),
  });
  const clientEvents =
    config.features.has(GraphFeature.CLIENT_EVENTS) &&
    request.metadata.graph_stream_events === STREAM_EVENTS_VERSION &&
    request.stream === true;
  const toolEvents = config.events.tools ?? context.toolEventsByDefault ?? false;
  return {
    model: request.model,
    config,
    graph,
    request,
    input,
    runConfig,
    usage,
    clientEvents,
    ...(clientEvents && toolEvents !== false ? { toolEvents } : {}),
    log: context.log,
    interrupt,
    thread,
    release: async (options) => {
      runSignal.dispose();
      if (interrupt !== undefined) await interrupt.lease.release();
      if (thread !== undefined) await thread.end(timeoutMs, context.log, options);
    },
  };
}
