import type { FastifyReply, FastifyRequest } from "fastify";
import type { BackgroundRuns } from "../background/background-runs.js";
import { GraphConfigurationError } from "../errors/catalogue.js";
import { isServeError, type ServeError } from "../errors/serve-error.js";
import { toServeError } from "../errors/to-serve-error.js";
import type { GraphRegistry } from "../registry/graph-registry.js";
import type { ResumeOf } from "../runs/interrupts/interrupt-run.js";
import { type PreparedRun, prepareRun, type RunRequestContext } from "../runs/prepare-run.js";
import type { RunTracker } from "../runs/run-tracker.js";
import type { RunStreamEvent } from "../runs/stream-run.js";
import type { ThreadRequest } from "../runs/threads/run-thread.js";
import type { ClientFlow } from "../runs/usage.js";
import type { TracingCallback } from "../tracing/tracing-callback.js";
import type { ChatCompletionRequest } from "../wire/request.js";
import type { Admission, RunLimits } from "./limits.js";
import type { ServerMetrics } from "./metrics.js";
import { assertVisible } from "./visibility.js";
import { whenWritable } from "./writable.js";

/**
 * The server-trusted isolation scope of interrupt checkpoints, from an authenticated tenant
 * or principal: never from request metadata or `user`. Sync or async; a non-empty string.
 * With `auth`, the default is the caller's tenant (`request.chatServeCaller.tenant`).
 */
/** The wire of a mount: `strict` (OpenAI's) or `chat-ui` (for chat UIs such as Open WebUI). */
export type ClientProfile = "strict" | "chat-ui";

export type CheckpointScope = (request: FastifyRequest) => string | Promise<string>;

/**
 * The server-trusted scope of a request: `checkpointScope` when the server has one, else the
 * authenticated tenant, else `"default"`. Interrupt runs, threads and stored objects all live
 * in it, so one tenant never reaches another's.
 */
function scopeResolver(request: FastifyRequest, checkpointScope: CheckpointScope | undefined): (() => Promise<string>) | undefined {
  const caller = request.chatServeCaller;
  // The tenant is the default scope: one tenant never sees another's runs.
  const scope = checkpointScope ?? (caller === undefined ? undefined : () => caller.tenant);
  return scope === undefined ? undefined : async () => scope(request);
}

/**
 * Whether the request's graphs read the Agent Protocol's shared store (scope `default`): the
 * users of a project's LangGraph `Auth` share it, as its threads, and its handlers tell them apart.
 */
export function sharesAgentStore(request: FastifyRequest, checkpointScope: CheckpointScope | undefined): boolean {
  return request.chatServeCaller?.sharesAgentScope === true && checkpointScope === undefined;
}

/** The scope of a request, resolved (see `scopeResolver`). */
export async function requestScope(request: FastifyRequest, checkpointScope: CheckpointScope | undefined): Promise<string> {
  const resolve = scopeResolver(request, checkpointScope);
  const value = resolve === undefined ? "default" : await resolve();
  if (typeof value !== "string" || value.length === 0) {
    throw new GraphConfigurationError("checkpointScope must return a non-empty string.");
  }
  return value;
}

/** What a route tells the run about the request beyond its body: a resume, a thread. */
export interface RunExtras {
  resumeOf?: ResumeOf;
  thread?: ThreadRequest;
  /** Automatic tool statuses for models that set none (the `chat-ui` profile turns them on). */
  toolEventsByDefault?: boolean;
  /** Stops the run when it aborts, as a client that disconnects does (an MCP client's cancellation). */
  signal?: AbortSignal;
}

/** What every route that runs a graph shares. */
export interface RunRouteOptions {
  registry: GraphRegistry;
  checkpointScope?: CheckpointScope;
  tracing?: TracingCallback;
  runs: RunTracker;
  bodyLimit: number;
  keepAliveMs: number;
  /** A client whose connection takes nothing for this long is dropped (`server.stalledClientTimeoutMs`). */
  stalledClientMs: number;
  backendTimeoutMs: number;
  limits?: RunLimits;
  metrics?: ServerMetrics;
  /** Background responses; absent: `background: true` is refused (with `backgroundUnavailable` as the reason). */
  background?: BackgroundRuns;
  backgroundUnavailable?: string;
}

/**
 * The error a failed run answers with: why the server stopped it (a shutdown that ran out of
 * time) when it did, otherwise what it threw.
 */
function runFailure(run: PreparedRun, error: unknown): ServeError {
  const signal = run.runConfig.signal as AbortSignal | undefined;
  if (signal?.aborted === true && isServeError(signal.reason)) return signal.reason;
  return toServeError(error);
}

/** The `api` label of a run route, as its surface declared it. */
function apiOf(request: FastifyRequest): string {
  return request.routeOptions.config.api ?? "other";
}

/**
 * A run's events with what the metrics watch: the stream counted as open while it is, and the
 * time to its first text. Without metrics, the events themselves (no wrapper on the hot path).
 */
export function observedEvents(
  request: FastifyRequest,
  options: RunRouteOptions,
  run: PreparedRun,
  events: AsyncIterable<RunStreamEvent>,
): AsyncIterable<RunStreamEvent> {
  const { metrics } = options;
  return metrics === undefined ? events : watchedEvents(metrics, request, run, events);
}

async function* watchedEvents(
  metrics: ServerMetrics,
  request: FastifyRequest,
  run: PreparedRun,
  events: AsyncIterable<RunStreamEvent>,
): AsyncGenerator<RunStreamEvent> {
  const labels = { model: run.model, api: apiOf(request) };
  metrics.streamOpened(labels.api);
  let first = true;
  try {
    for await (const event of events) {
      if (first && (event.kind === "text" || event.kind === "final")) {
        first = false;
        metrics.firstToken(labels, (performance.now() - request.chatServeStarted) / 1000);
      }
      yield event;
    }
  } finally {
    metrics.streamClosed(labels.api);
  }
}

/** The error frame of a stream that failed after it began: logged, counted, in the OpenAI shape. */
export function streamErrorBody(request: FastifyRequest, reply: FastifyReply, options: RunRouteOptions, run: PreparedRun, error: unknown) {
  return runErrorBody(request, clientGone(reply), options, run, error);
}

/**
 * The error a run ends with once its answer has begun: logged unless its client caused it by
 * leaving (`gone`), and counted.
 */
export function runErrorBody(
  request: FastifyRequest,
  gone: boolean,
  options: RunRouteOptions,
  run: PreparedRun,
  error: unknown,
): ServeError {
  if (toServeError(error).status >= 500 && !gone) request.log.error({ err: error }, "the stream failed after it had begun");
  const failure = runFailure(run, error);
  request.chatServeFailure = failure.code;
  options.metrics?.error(failure.code);
  return failure;
}

/** A client that went away mid-run gets no answer; the run was aborted through its signal. */
function clientGone(reply: FastifyReply): boolean {
  return reply.raw.destroyed || reply.raw.socket?.destroyed === true;
}

/**
 * Where a run's client is, as the run sees it: whether it went away (the run is then aborted)
 * and what the answer is once it has. An HTTP reply is one; a WebSocket message is another.
 */
export interface RunClient<R> {
  /** Calls `gone` if the client goes away before the answer has ended; returns what stops watching. */
  watch(gone: () => void): () => void;
  /** True once the client has gone. */
  gone(): boolean;
  /** The answer to a run whose client left (nothing is sent). */
  abandoned(): R;
  /** The HTTP reply, for the rate-limit headers; a WebSocket message has none. */
  reply?: FastifyReply;
  /** Undefined while the client takes data; else when it does again (see `writable.ts`): the run's backpressure. */
  writable?: ClientFlow;
}

/** An HTTP reply as a run's client: gone when its connection closes before the answer ended. */
function replyClient(reply: FastifyReply, stalledMs: number): RunClient<FastifyReply> {
  return {
    reply,
    writable: () => whenWritable(reply.raw, stalledMs),
    watch(gone) {
      const onClose = () => {
        if (!reply.raw.writableFinished) gone();
      };
      reply.raw.on("close", onClose);
      return () => reply.raw.off("close", onClose);
    },
    gone: () => clientGone(reply),
    abandoned: () => {
      reply.hijack();
      return reply;
    },
  };
}

/**
 * One graph run behind one HTTP request, whatever the dialect: the run is tracked and aborted
 * when the client disconnects, prepared (every client error raised before a byte is sent),
 * answered by `respond`, and on every path its lease released and its tracking ended.
 */
export function runForRequest<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  options: RunRouteOptions,
  engineRequest: ChatCompletionRequest,
  respond: (run: PreparedRun) => Promise<T>,
  extras: RunExtras = {},
): Promise<T | FastifyReply> {
  return runForClient(request, replyClient(reply, options.stalledClientMs), options, engineRequest, respond, extras);
}

/** `runForRequest` for any client: an HTTP reply, or one message of a WebSocket. */
export async function runForClient<T, R>(
  request: FastifyRequest,
  client: RunClient<R>,
  options: RunRouteOptions,
  engineRequest: ChatCompletionRequest,
  respond: (run: PreparedRun) => Promise<T>,
  extras: RunExtras = {},
): Promise<T | R> {
  const controller = options.runs.start();
  const unwatch = client.watch(() => controller.abort(new Error("the client disconnected")));
  const onCancel = () => controller.abort(new Error("the client cancelled the request"));
  extras.signal?.addEventListener("abort", onCancel, { once: true });
  if (extras.signal?.aborted === true) onCancel();
  const caller = request.chatServeCaller;
  let run: PreparedRun | undefined;
  let admission: Admission | undefined;
  try {
    assertVisible(options.registry, caller, engineRequest.model);
    if (options.limits !== undefined) admission = await options.limits.admit(request, client.reply, engineRequest.model);
    const context: RunRequestContext = {
      requestId: request.chatServeRequestId,
      signal: controller.signal,
      log: request.log,
      tracing: options.tracing,
      backendTimeoutMs: options.backendTimeoutMs,
      scope: scopeResolver(request, options.checkpointScope),
      caller: { tenant: caller?.tenant, ...(caller?.authUser === undefined ? {} : { authUser: caller.authUser }) },
      ...(sharesAgentStore(request, options.checkpointScope) ? { storeScope: "default" } : {}),
    };
    // Only a stream writes before the run ends: a complete answer never fills the connection.
    if (client.writable !== undefined && engineRequest.stream === true) context.flow = client.writable;
    if (extras.resumeOf !== undefined) context.resumeOf = extras.resumeOf;
    if (extras.thread !== undefined) context.thread = extras.thread;
    if (extras.toolEventsByDefault !== undefined) context.toolEventsByDefault = extras.toolEventsByDefault;
    run = await prepareRun(options.registry, engineRequest, context);
    return await respond(run);
  } catch (error) {
    if (controller.signal.aborted && client.gone()) {
      request.log.info("the client disconnected; the run was aborted");
      return client.abandoned();
    }
    // Stopped by the server (a shutdown out of time): say so, not what the abort looked like inside.
    if (controller.signal.aborted && isServeError(controller.signal.reason)) throw controller.signal.reason;
    throw error;
  } finally {
    unwatch();
    extras.signal?.removeEventListener("abort", onCancel);
    if (run !== undefined) await run.release();
    if (admission !== undefined) await admission();
    if (run !== undefined) options.metrics?.tokens({ model: run.model, api: apiOf(request) }, run.usage.usage());
    options.runs.finish(controller);
  }
}
