import type { FastifyReply, FastifyRequest } from "fastify";
import { AgentNotFoundError } from "../../errors/catalogue.js";
import type { RouteTable } from "../../http/lazy-routes.js";
import { protocolJsonInTurns } from "../../runs/agent/agent-graph.js";
import { backendCall } from "../../runs/agent/agent-run-config.js";
import { RunEvents } from "../../runs/agent/run-events.js";
import type { AgentRunRecord } from "../../store/agent-records.js";
import { clientGone, writeAgentSse } from "./agent-sse.js";
import type { LangGraphRoutes } from "./langgraph-routes.js";
import { parseRunCreate } from "./langgraph-schemas.js";
import { guardRunCreate, guardThread } from "./route-auth.js";

type ThreadParams = { Params: { thread_id: string } };
type RunParams = { Params: { thread_id: string; run_id: string } };

/** Runs: create one (in the background, streamed, or waited on), on a thread or stateless; read, join, cancel and delete them. */
export function registerRunRoutes(on: RouteTable, routes: LangGraphRoutes): void {
  const { runs, records } = routes;
  const backend = <T>(operation: Promise<T>) => backendCall("the thread records", routes.backendTimeoutMs, () => operation);

  /** Parses a run's body and admits it against the limits; `start` creates it with the slot to give back. */
  async function create<T>(
    request: FastifyRequest,
    reply: FastifyReply,
    start: (scope: string, parsed: ReturnType<typeof parseRunCreate>, admission: (() => Promise<void>) | undefined) => Promise<T>,
  ): Promise<T & ReturnType<typeof parseRunCreate>> {
    const body = parseRunCreate(request.body);
    const scope = await routes.scopeOf(request);
    const { run, model } = await routes.prepareRun(request, scope, body.request);
    if (run.afterSeconds !== undefined) routes.metrics?.delayedRun();
    const parsed = { ...body, request: run };
    await guardRunCreate(routes, request, scope, (request.params as { thread_id?: string }).thread_id, parsed.request);
    // Counted against the tenant's and the model's limits; its slot is given back when the run ends.
    const admission = await routes.limits?.admit(request, reply, model);
    try {
      return { ...(await start(scope, parsed, admission)), ...parsed };
    } catch (error) {
      await admission?.();
      throw error;
    }
  }
  const startHere =
    (threadId: string | undefined) => (scope: string, parsed: ReturnType<typeof parseRunCreate>, admission?: () => Promise<void>) =>
      runs.start(scope, threadId, parsed.request, admission);

  /** Queues a run on the shared queue; its concurrency slot is the request's, given back when the client is answered. */
  const queueHere =
    (threadId: string | undefined) =>
    async (scope: string, parsed: ReturnType<typeof parseRunCreate>, admission?: () => Promise<void>) => ({
      run: await runs.startInBackground(scope, threadId, parsed.request),
      admission,
    });

  /** Streams a run's events from `after` until it ends; a client that leaves cancels the run only when it asked to. */
  async function stream(
    reply: FastifyReply,
    run: AgentRunRecord,
    events: Pick<RunEvents, "follow" | "finished">,
    options: { after: number; ids: boolean; cancel: boolean },
  ) {
    const gone = clientGone(reply);
    try {
      await writeAgentSse(reply, events.follow(options.after, gone.signal), {
        keepAliveMs: routes.keepAliveMs,
        stalledClientMs: routes.stalledClientMs,
        ids: options.ids,
        headers: { "content-location": `/threads/${run.thread_id}/runs/${run.run_id}` },
      });
    } finally {
      gone.dispose();
      if (options.cancel && !events.finished && gone.signal.aborted) {
        await runs.cancel(run.scope, run.thread_id, run.run_id, { wait: false, action: "interrupt" }).catch(() => {});
      }
    }
    return reply;
  }

  /** A run waited on: the thread's values when it ends (or the error it ended with). */
  async function waited(reply: FastifyReply, run: AgentRunRecord, cancel: boolean) {
    const live = runs.live(run.scope, run.thread_id, run.run_id);
    if (live === undefined) throw new AgentNotFoundError("run", run.run_id);
    const gone = clientGone(reply);
    const cancelled = () => {
      if (cancel) void runs.cancel(run.scope, run.thread_id, run.run_id, { wait: false, action: "interrupt" }).catch(() => {});
    };
    gone.signal.addEventListener("abort", cancelled, { once: true });
    try {
      reply.header("content-location", `/threads/${run.thread_id}/runs/${run.run_id}`);
      // A large state is written in turns (the same JSON the surface's serializer writes), so others are served meanwhile.
      const json = (await protocolJsonInTurns((await runs.join(live)) ?? null)) ?? "null";
      return reply.type("application/json; charset=utf-8").send(json);
    } finally {
      gone.signal.removeEventListener("abort", cancelled);
      gone.dispose();
    }
  }

  /** A run of the shared queue waited on, from any process: what its worker logged when it ended. */
  async function waitedShared(reply: FastifyReply, run: AgentRunRecord, cancel: boolean) {
    const gone = clientGone(reply);
    try {
      reply.header("content-location", `/threads/${run.thread_id}/runs/${run.run_id}`);
      const result = await runs.resultOf(run, gone.signal);
      if (gone.signal.aborted && cancel) {
        await runs.cancel(run.scope, run.thread_id, run.run_id, { wait: false, action: "interrupt" }).catch(() => {});
      }
      return result ?? null;
    } finally {
      gone.dispose();
    }
  }

  for (const [path, threaded] of [
    ["/threads/:thread_id/runs", true],
    ["/runs", false],
  ] as const) {
    on.post<ThreadParams>(path, async (request, reply) => {
      const threadId = threaded ? request.params.thread_id : undefined;
      // In the background: on the shared queue when the deployment has one.
      const { run } = await create(request, reply, async (scope, parsed, admission) => ({
        run: await runs.startInBackground(scope, threadId, parsed.request, admission),
      }));
      reply.header("content-location", `/threads/${run.thread_id}/runs/${run.run_id}`);
      return publicRun(run);
    });
    on.post<ThreadParams>(`${path}/stream`, async (request, reply) => {
      const threadId = threaded ? request.params.thread_id : undefined;
      if (runs.shared) {
        // On the shared queue: any process runs it, streams it, joins it and cancels it.
        const { run, resumable, cancelOnDisconnect, admission } = await create(request, reply, queueHere(threadId));
        try {
          const shared = await runs.sharedEvents(run, -1);
          const events = shared === undefined ? endedEvents() : { finished: false, follow: shared.follow };
          return await stream(reply, run, events, { after: -1, ids: resumable, cancel: cancelOnDisconnect });
        } finally {
          await admission?.();
        }
      }
      const { run, events, resumable, cancelOnDisconnect } = await create(request, reply, startHere(threadId));
      return stream(reply, run, events, { after: -1, ids: resumable, cancel: cancelOnDisconnect });
    });
    on.post<ThreadParams>(`${path}/wait`, async (request, reply) => {
      const threadId = threaded ? request.params.thread_id : undefined;
      if (runs.shared) {
        const { run, cancelOnDisconnect, admission } = await create(request, reply, queueHere(threadId));
        try {
          return await waitedShared(reply, run, cancelOnDisconnect);
        } finally {
          await admission?.();
        }
      }
      const { run, cancelOnDisconnect } = await create(request, reply, startHere(threadId));
      return waited(reply, run, cancelOnDisconnect);
    });
  }

  on.get<ThreadParams & { Querystring: { limit?: string; offset?: string; status?: string } }>(
    "/threads/:thread_id/runs",
    async (request) => {
      const scope = await routes.scopeOf(request);
      await guardThread(routes, request, scope, request.params.thread_id, "read");
      await routes.threads.record(scope, request.params.thread_id);
      const limit = Math.max(1, Number(request.query.limit ?? 10) || 10);
      const offset = Math.max(0, Number(request.query.offset ?? 0) || 0);
      const all = await backend(records.listRuns(scope, request.params.thread_id));
      const status = request.query.status;
      return all
        .filter((run) => status === undefined || run.status === status)
        .slice(offset, offset + limit)
        .map(publicRun);
    },
  );

  /** The run the path names, on a thread the caller may `action` (404 otherwise). */
  async function known(request: FastifyRequest<RunParams>, action: "read" | "update" | "delete" = "read"): Promise<AgentRunRecord> {
    const scope = await routes.scopeOf(request);
    await guardThread(routes, request, scope, request.params.thread_id, action, { run_id: request.params.run_id });
    const run = await backend(records.getRun(scope, request.params.run_id));
    if (run === undefined || run.thread_id !== request.params.thread_id) throw new AgentNotFoundError("run", request.params.run_id);
    return run;
  }

  on.get<RunParams>("/threads/:thread_id/runs/:run_id", async (request) => publicRun(await known(request)));

  on.delete<RunParams>("/threads/:thread_id/runs/:run_id", async (request, reply) => {
    const run = await known(request, "delete");
    if (run.status === "pending" || run.status === "running") {
      await runs.cancel(run.scope, run.thread_id, run.run_id, { wait: true, action: "interrupt" });
    }
    await backend(records.deleteRun(run.scope, run.run_id));
    return reply.status(204).send();
  });

  on.get<RunParams>("/threads/:thread_id/runs/:run_id/join", async (request, reply) => {
    const run = await known(request);
    const live = runs.live(run.scope, run.thread_id, run.run_id);
    if (live !== undefined) await runs.join(live);
    else {
      // Run by another process, or a run of the shared queue: its log, or its record, says when it has ended.
      const gone = clientGone(reply);
      try {
        await runs.awaitEnd(run, gone.signal);
      } finally {
        gone.dispose();
      }
    }
    // Joined: the thread's values as the run left them.
    const thread = await routes.threads.record(run.scope, run.thread_id);
    return (await routes.threads.snapshot(thread))?.values ?? {};
  });

  on.get<RunParams & { Querystring: { cancel_on_disconnect?: string } }>(
    "/threads/:thread_id/runs/:run_id/stream",
    async (request, reply) => {
      const run = await known(request);
      const live = runs.live(run.scope, run.thread_id, run.run_id);
      const lastEventId = request.headers["last-event-id"];
      // `-1`: from the first event.
      const after = typeof lastEventId === "string" && /^-?\d+$/u.test(lastEventId) ? Math.max(-1, Number(lastEventId)) : undefined;
      if (live === undefined) {
        // A run of the shared queue, from its log (any process); otherwise ended long ago, or
        // streaming to a client of another process: nothing more comes here.
        const shared = await runs.sharedEvents(run, after);
        const events = shared === undefined ? endedEvents() : { finished: false, follow: shared.follow };
        return stream(reply, run, events, { after: shared?.after ?? -1, ids: true, cancel: false });
      }
      // Without Last-Event-ID, only what happens from now on (a join); with it, everything after it.
      const cancel = request.query.cancel_on_disconnect === "true" || request.query.cancel_on_disconnect === "1";
      return stream(reply, run, live.events, { after: after ?? live.events.last, ids: true, cancel });
    },
  );

  on.post<RunParams & { Querystring: { wait?: string; action?: string } }>(
    "/threads/:thread_id/runs/:run_id/cancel",
    async (request, reply) => {
      const run = await known(request, "update");
      const wait = request.query.wait === "true" || request.query.wait === "1";
      const action = request.query.action === "rollback" ? "rollback" : "interrupt";
      await runs.cancel(run.scope, run.thread_id, run.run_id, { wait, action });
      return reply.status(wait ? 204 : 202).send();
    },
  );
}

/** The events of a run this process no longer holds: none, and the stream ends at once. */
function endedEvents(): RunEvents {
  const events = new RunEvents();
  events.finish();
  return events;
}

/** A run as clients see it: without the server's own fields. */
function publicRun(run: AgentRunRecord): Record<string, unknown> {
  const { scope: _scope, temporary: _temporary, checkpoint_before: _before, ...shown } = run;
  return { ...shown, kwargs: run.kwargs ?? {}, cancel_reason: run.cancel_reason ?? null };
}
