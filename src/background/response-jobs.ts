import { setTimeout as sleep } from "node:timers/promises";
import { type ParsedResponsesRequest, parseResponsesRequest } from "../dialects/responses/parse-responses-request.js";
import { responseId } from "../dialects/responses/response-id.js";
import { ResponseRenderer } from "../dialects/responses/response-renderer.js";
import { planResponsesRun, type ResolvedRequest, saveResponse } from "../dialects/responses/responses-run.js";
import { storeCall } from "../dialects/responses/stored-context.js";
import { toStoredItems } from "../dialects/responses/stored-items.js";
import { InvalidRequestError, RunBusyError, ServerShuttingDownError } from "../errors/catalogue.js";
import { isChatServeError } from "../errors/serve-error.js";
import { toServeError } from "../errors/to-serve-error.js";
import { GraphFeature } from "../registry/features.js";
import { resolveRunId } from "../runs/interrupts/checkpoint-key.js";
import { JobCancelledError, JobLostError, type JobOutcome } from "../runs/jobs.js";
import { type PreparedRun, prepareRun } from "../runs/prepare-run.js";
import { streamRun } from "../runs/stream-run.js";
import type { ResponseRecord } from "../store/conversation-store.js";
import { anySignal } from "../util/any-signal.js";
import type { ResponseObject, ResponseStreamEvent } from "../wire/responses-response.js";
import type { BackgroundRunsOptions, Submitted } from "./background-runs.js";
import type { BackgroundJob } from "./job-queue.js";
import { planStart } from "./takeover.js";
import type { WebhookEventType } from "./webhooks.js";

// A background response's life, as a worker and its submitter live it: queued (checked, stored,
// enqueued), then run by a worker to its end, saved as it goes, its events logged. Loaded with
// the first background response (see background-runs.ts).

// A running response is saved at most this often, so a poll sees its output so far.
const SAVE_EVERY_MS = 1_000;

const ENDED: Record<string, WebhookEventType> = {
  completed: "response.completed",
  incomplete: "response.incomplete",
  failed: "response.failed",
  cancelled: "response.cancelled",
};

/**
 * Queues a background response. Everything a client can get wrong is checked first, as for
 * a foreground request, so nothing is queued that cannot run; then the response is stored
 * `queued`, its `response.created` event logged, and the job enqueued.
 *
 * @public Loaded by background-runs.ts with a dynamic import.
 */
export async function submitResponse(
  options: BackgroundRunsOptions,
  parsed: ParsedResponsesRequest,
  job: Omit<BackgroundJob, "responseId" | "runId">,
): Promise<Submitted> {
  const { registry, backendTimeoutMs } = options;
  if (parsed.body.store === false) {
    throw new InvalidRequestError("background responses are stored: remove store: false, or run in the foreground.", {
      param: "store",
    });
  }
  // An interrupt run's response id names its run, so a background pause can be answered too.
  const interrupts = registry.getGraph(parsed.body.model).features.has(GraphFeature.INTERRUPTS);
  const runId = parsed.resume?.runId ?? (interrupts ? resolveRunId(parsed.body.metadata?.graph_run_id) : undefined);
  const id = responseId(runId);
  // Checked now (stored ids, conversations, the input); the worker resolves them again when it starts.
  await planResponsesRun({ registry, backendTimeoutMs }, parsed, job.scope, id);
  const renderer = new ResponseRenderer(id, parsed.body, false, true, {
    background: true,
    ...(parsed.conversationId === undefined ? {} : { conversationId: parsed.conversationId }),
  });
  const created = renderer.queued();
  await save(options, job.scope, parsed, renderer.response);
  const full: BackgroundJob = { ...job, responseId: id, queuedAt: Date.now(), ...(runId === undefined ? {} : { runId }) };
  try {
    if (parsed.body.stream === true) await storeCall(backendTimeoutMs, () => options.events.append(id, created));
    await storeCall(backendTimeoutMs, () => options.queue.enqueue(full));
  } catch (error) {
    // No worker will ever see it: the stored response says so rather than reading `queued` forever.
    renderer.fail(toServeError(error));
    await save(options, job.scope, parsed, renderer.response).catch(() => {});
    throw error;
  }
  return { response: renderer.response };
}

/** Stores the response as it stands, without its conversation's items (those come at the end). */
async function save(
  options: BackgroundRunsOptions,
  scope: string,
  parsed: ParsedResponsesRequest,
  response: ResponseObject,
): Promise<void> {
  const record: ResponseRecord = {
    id: response.id,
    scope,
    model: response.model,
    createdAt: new Date(response.created_at * 1000),
    response: structuredClone(response) as unknown as Record<string, unknown>,
    inputItems: toStoredItems(parsed.items),
    ...(parsed.body.previous_response_id == null ? {} : { previousResponseId: parsed.body.previous_response_id }),
    ...(parsed.conversationId === undefined ? {} : { conversationId: parsed.conversationId }),
  };
  await storeCall(options.backendTimeoutMs, () => options.registry.store.saveResponse(record));
}

/**
 * Runs one background response: to its end (completed, incomplete, failed or cancelled), or
 * until this worker hands it back (stopping) or loses it (another worker has its lock).
 * Never throws.
 *
 * @public Loaded by background-runs.ts with a dynamic import.
 */
export async function executeResponse(
  options: BackgroundRunsOptions,
  job: BackgroundJob,
  jobSignal: AbortSignal,
  attempt: number,
  /** The run as the server's tracker knows it (its caller ends it). */
  tracked: AbortController,
): Promise<JobOutcome> {
  const { registry, backendTimeoutMs, events, queue } = options;
  const signal = anySignal([jobSignal, tracked.signal]);
  const parsed = parseResponsesRequest(job.body);
  const streaming = parsed.body.stream === true;
  const renderer = new ResponseRenderer(job.responseId, parsed.body, false, true, {
    background: true,
    ...(parsed.conversationId === undefined ? {} : { conversationId: parsed.conversationId }),
  });
  // Events go to the log in order; a log that fails loses events, never the run.
  let logging = Promise.resolve();
  let logFailed = false;
  const emit = (produced: ResponseStreamEvent[]) => {
    if (!streaming || produced.length === 0) return;
    logging = logging
      .then(() => events.append(job.responseId, produced))
      .catch((error: unknown) => {
        if (!logFailed) options.log?.warn({ err: error, response: job.responseId }, "could not log a background response's events");
        logFailed = true;
      });
  };
  const config = registry.getGraph(parsed.body.model);
  const start = planStart(config, job.responseId, attempt, options.resumable === true);
  let run: PreparedRun | undefined;
  let startedAt: number | undefined;
  let outcome: JobOutcome = "done";
  // Runs another worker goes on with: a lost job, or one handed back at the end of the grace.
  const handsBack = (reason: unknown) =>
    reason instanceof JobLostError ||
    (reason instanceof ServerShuttingDownError &&
      queue.shared &&
      start.kind === "run" &&
      (start.durable !== undefined || config.background.retry));
  // Told as the signal fires, before the run unwinds: what another worker goes on from stays.
  const keep = () => {
    if (handsBack(signal.signal.reason)) run?.interrupt?.keep();
  };
  signal.signal.addEventListener("abort", keep, { once: true });
  try {
    if (signal.signal.aborted) throw signal.signal.reason;
    startedAt = Date.now();
    if (job.queuedAt !== undefined && attempt === 1) {
      options.metrics?.backgroundStarted(parsed.body.model, (startedAt - job.queuedAt) / 1000);
    }
    // A run taken over numbers its events after those its first worker logged.
    emit(renderer.started(streaming ? (await storeCall(backendTimeoutMs, () => events.last(job.responseId))) + 1 : 1));
    await save(options, job.scope, parsed, renderer.response);
    if (start.kind === "fail") throw start.error;
    const resolved: ResolvedRequest = await planResponsesRun({ registry, backendTimeoutMs }, parsed, job.scope, job.responseId);
    const engine =
      job.runId === undefined || parsed.resume !== undefined
        ? resolved.engine
        : { ...resolved.engine, metadata: { ...resolved.engine.metadata, graph_run_id: job.runId } };
    run = await prepare(options, engine, job, signal.signal, resolved, parsed, start.durable, attempt);
    const prepared = run;
    // A background response's renderer is made before its run: the run says whether events go out.
    renderer.clientEvents = run.clientEvents;
    let saved = Date.now();
    for await (const event of streamRun(prepared)) {
      const produced = renderer.render(event);
      if (event.kind === "final") await saveResponse({ registry, backendTimeoutMs }, parsed, resolved, prepared, renderer);
      emit(produced);
      if (event.kind !== "final" && Date.now() - saved >= SAVE_EVERY_MS) {
        saved = Date.now();
        await save(options, job.scope, parsed, renderer.response);
      }
    }
  } catch (error) {
    const reason = signal.signal.aborted ? signal.signal.reason : undefined;
    if (reason instanceof JobLostError) {
      // Another worker has the run now: it says how the run ends.
      outcome = "lost";
    } else if (handsBack(reason)) {
      // Out of shutdown grace: another worker takes the run over.
      outcome = "handed-back";
    } else {
      if (reason instanceof JobCancelledError) {
        renderer.cancel();
      } else {
        const failure = toServeError(reason ?? error);
        if (failure.status >= 500) options.log?.error({ err: error, response: job.responseId }, "a background response failed");
        emit(renderer.fail(failure));
      }
      await save(options, job.scope, parsed, renderer.response).catch((saveError: unknown) =>
        options.log?.error({ err: saveError, response: job.responseId }, "could not store how a background response ended"),
      );
    }
  } finally {
    if (outcome === "done") {
      const ended = ENDED[renderer.response.status];
      if (ended !== undefined) options.webhooks?.responseEnded(ended, job.responseId);
      options.metrics?.backgroundEnded(
        parsed.body.model,
        renderer.response.status,
        startedAt === undefined ? undefined : (Date.now() - startedAt) / 1000,
      );
      await logging;
      if (streaming) await storeCall(backendTimeoutMs, () => events.finish(job.responseId)).catch(() => {});
    }
    await logging;
    signal.signal.removeEventListener("abort", keep);
    signal.dispose();
    await run?.release({ keepThread: outcome !== "done" });
  }
  return outcome;
}

/**
 * Prepares the run. A run taken over waits for its conversation's lease, which the worker
 * that died may hold until the lease expires.
 */
async function prepare(
  options: BackgroundRunsOptions,
  engine: ResolvedRequest["engine"],
  job: BackgroundJob,
  signal: AbortSignal,
  resolved: ResolvedRequest,
  parsed: ParsedResponsesRequest,
  durable: { threadId: string; resume: boolean } | undefined,
  attempt: number,
): Promise<PreparedRun> {
  const { registry, backendTimeoutMs } = options;
  const waitUntil = Date.now() + (attempt > 1 ? (options.leaseWaitMs ?? 35_000) : 0);
  for (;;) {
    try {
      return await prepareRun(registry, engine, {
        requestId: job.requestId,
        signal,
        ...(options.log === undefined ? {} : { log: options.log }),
        backendTimeoutMs,
        ...(options.leaseTtlMs === undefined ? {} : { leaseTtlMs: options.leaseTtlMs }),
        scope: async () => job.scope,
        caller: { tenant: job.tenant, ...(job.authUser === undefined ? {} : { authUser: job.authUser }) },
        ...(job.storeScope === undefined ? {} : { storeScope: job.storeScope }),
        ...(parsed.resume === undefined ? {} : { resumeOf: parsed.resume }),
        ...(resolved.context.thread === undefined ? {} : { thread: resolved.context.thread }),
        ...(durable === undefined ? {} : { durable }),
      });
    } catch (error) {
      if (!isChatServeError(error, RunBusyError) || Date.now() >= waitUntil || signal.aborted) throw error;
      await sleep(500, undefined, { signal }).catch(() => {});
    }
  }
}
