import type { FastifyRequest } from "fastify";
import { AgentConflictError, AgentNotFoundError } from "../../errors/catalogue.js";
import { matchesFilters } from "../../http/langgraph-auth.js";
import type { RouteTable } from "../../http/lazy-routes.js";
import type { AgentThreadRecord } from "../../store/agent-records.js";
import type { LangGraphRoutes } from "./langgraph-routes.js";
import { historyRequest, parseBody, stateUpdate, threadCreate, threadPatch, threadPrune, threadSearch } from "./langgraph-schemas.js";
import { authorize, guardThread, visible } from "./route-auth.js";

type ThreadParams = { Params: { thread_id: string } };

const SORTED_BY = (key: keyof AgentThreadRecord, order: "asc" | "desc") => (a: AgentThreadRecord, b: AgentThreadRecord) => {
  const left = String(a[key] ?? "");
  const right = String(b[key] ?? "");
  const compared = left < right ? -1 : left > right ? 1 : 0;
  return order === "asc" ? compared : -compared;
};

function subgraphsOf(request: FastifyRequest): boolean {
  const value = (request.query as { subgraphs?: unknown }).subgraphs;
  return value === "true" || value === "1";
}

/** What a search asks, as a `threads:search` handler sees it. */
function searchValue(body: { metadata?: unknown; ids?: unknown; status?: unknown; values?: unknown; limit?: unknown; offset?: unknown }) {
  return { metadata: body.metadata, ids: body.ids, status: body.status, values: body.values, limit: body.limit, offset: body.offset };
}

/** Threads: create, read, change, delete, search and count them; their state and its history. */
export function registerThreadRoutes(on: RouteTable, routes: LangGraphRoutes): void {
  const { threads } = routes;

  on.post("/threads", async (request) => {
    const body = parseBody(threadCreate, request.body, "thread");
    const scope = await routes.scopeOf(request);
    const { filters, value } = await authorize(routes, request, "threads:create", {
      thread_id: body.thread_id ?? undefined,
      metadata: { ...body.metadata },
      if_exists: body.if_exists ?? undefined,
    });
    if (filters !== undefined && body.thread_id != null) {
      // Another user's thread of that id is one this caller may not have, as on LangGraph's server.
      const existing = await threads.find(scope, body.thread_id);
      if (existing !== undefined && !matchesFilters(existing.metadata, filters))
        throw new AgentConflictError(`Thread ${body.thread_id} already exists.`);
    }
    return threads.json(await threads.create(scope, { ...body, metadata: value.metadata }));
  });

  on.post("/threads/search", async (request, reply) => {
    const body = parseBody(threadSearch, request.body, "search");
    const { filters } = await authorize(routes, request, "threads:search", searchValue(body));
    const found = visible(await threads.search(await routes.scopeOf(request), body), filters);
    found.sort(SORTED_BY(body.sort_by ?? "created_at", body.sort_order ?? "desc"));
    const offset = body.offset ?? 0;
    const limit = body.limit ?? 10;
    const page = found.slice(offset, offset + limit);
    reply.header("x-pagination-total", String(found.length));
    if (offset + limit < found.length) reply.header("x-pagination-next", String(offset + limit));
    const shown = await Promise.all(page.map((record) => threads.json(record)));
    const select = body.select;
    return select == null
      ? shown
      : shown.map((thread) => Object.fromEntries(Object.entries(thread).filter(([key]) => select.includes(key))));
  });

  on.post("/threads/count", async (request) => {
    const body = parseBody(threadSearch, request.body, "count");
    const { filters } = await authorize(routes, request, "threads:search", searchValue(body));
    return visible(await threads.search(await routes.scopeOf(request), body), filters).length;
  });

  on.get<ThreadParams>("/threads/:thread_id", async (request) => {
    const scope = await routes.scopeOf(request);
    await guardThread(routes, request, scope, request.params.thread_id, "read");
    return threads.json(await threads.record(scope, request.params.thread_id));
  });

  on.patch<ThreadParams>("/threads/:thread_id", async (request) => {
    const body = parseBody(threadPatch, request.body, "thread");
    const scope = await routes.scopeOf(request);
    const value = await guardThread(routes, request, scope, request.params.thread_id, "update", { metadata: { ...body.metadata } });
    return threads.json(await threads.patch(scope, request.params.thread_id, (value.metadata as Record<string, unknown>) ?? {}, body.ttl));
  });

  on.delete<ThreadParams>("/threads/:thread_id", async (request, reply) => {
    const scope = await routes.scopeOf(request);
    await guardThread(routes, request, scope, request.params.thread_id, "delete");
    await threads.delete(scope, request.params.thread_id);
    return reply.status(204).send();
  });

  // The SDK's `threads.prune`: each thread the caller may delete, deleted or cut to its latest
  // checkpoint; those not there, not theirs, or busy are left and not counted.
  on.post("/threads/prune", async (request) => {
    const body = parseBody(threadPrune, request.body, "prune");
    const scope = await routes.scopeOf(request);
    let pruned = 0;
    for (const threadId of new Set(body.thread_ids)) {
      try {
        await guardThread(routes, request, scope, threadId, "delete");
        if (body.strategy === "keep_latest") {
          if (await threads.keepLatest(scope, threadId)) pruned += 1;
        } else {
          await threads.delete(scope, threadId);
          pruned += 1;
        }
      } catch (error) {
        if (!(error instanceof AgentNotFoundError || error instanceof AgentConflictError)) throw error;
      }
    }
    return { pruned_count: pruned };
  });

  on.post<ThreadParams>("/threads/:thread_id/copy", async (request) => {
    const scope = await routes.scopeOf(request);
    await guardThread(routes, request, scope, request.params.thread_id, "read");
    return threads.json(await threads.copy(scope, request.params.thread_id));
  });

  on.get<ThreadParams>("/threads/:thread_id/state", async (request) => {
    const scope = await routes.scopeOf(request);
    await guardThread(routes, request, scope, request.params.thread_id, "read");
    return threads.state(scope, request.params.thread_id, undefined, subgraphsOf(request));
  });

  on.get<{ Params: { thread_id: string; checkpoint_id: string } }>("/threads/:thread_id/state/:checkpoint_id", async (request) => {
    const { thread_id: threadId, checkpoint_id: checkpointId } = request.params;
    const scope = await routes.scopeOf(request);
    await guardThread(routes, request, scope, threadId, "read");
    return threads.state(scope, threadId, { checkpoint_id: checkpointId }, subgraphsOf(request));
  });

  on.post<ThreadParams>("/threads/:thread_id/state/checkpoint", async (request) => {
    const body = parseBody(historyRequest.pick({ checkpoint: true }), request.body, "checkpoint");
    const scope = await routes.scopeOf(request);
    await guardThread(routes, request, scope, request.params.thread_id, "read");
    return threads.state(scope, request.params.thread_id, body.checkpoint ?? undefined, subgraphsOf(request));
  });

  on.post<ThreadParams>("/threads/:thread_id/state", async (request) => {
    const body = parseBody(stateUpdate, request.body, "state update");
    const checkpoint = { ...body.checkpoint, ...(body.checkpoint_id == null ? {} : { checkpoint_id: body.checkpoint_id }) };
    const scope = await routes.scopeOf(request);
    await guardThread(routes, request, scope, request.params.thread_id, "update");
    return threads.update(scope, request.params.thread_id, body.values ?? null, body.as_node ?? undefined, checkpoint);
  });

  on.post<ThreadParams>("/threads/:thread_id/history", async (request) => {
    const body = parseBody(historyRequest, request.body, "history request");
    const scope = await routes.scopeOf(request);
    await guardThread(routes, request, scope, request.params.thread_id, "read");
    return threads.history(scope, request.params.thread_id, { ...body, limit: body.limit ?? 10 });
  });

  on.get<ThreadParams & { Querystring: { limit?: string; before?: string } }>("/threads/:thread_id/history", async (request) => {
    const limit = Number(request.query.limit ?? 10);
    const body = parseBody(
      historyRequest,
      { limit: Number.isInteger(limit) ? limit : 10, before: request.query.before },
      "history request",
    );
    const scope = await routes.scopeOf(request);
    await guardThread(routes, request, scope, request.params.thread_id, "read");
    return threads.history(scope, request.params.thread_id, { ...body, limit: body.limit ?? 10 });
  });
}
