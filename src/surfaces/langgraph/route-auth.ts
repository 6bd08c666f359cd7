import type { FastifyRequest } from "fastify";
import { AgentNotFoundError } from "../../errors/catalogue.js";
import { type AuthFilters, matchesFilters } from "../../http/langgraph-auth.js";
import { type AgentRunRequest, backendCall } from "../../runs/agent/agent-run-config.js";
import type { LangGraphRoutes } from "./langgraph-routes.js";

// A project's LangGraph `Auth` on the Agent Protocol's routes, as LangGraph's server applies
// it: the handler of each resource and action sees the request's value (and may change it: an
// owner in the metadata), and what a route reads must pass the filters it returns; a thread,
// run or item that does not is not found. Without an `Auth`, each of these lets everything by.

/** The handler's filters for `event` and the value as it left it (the request's own without an `Auth`). */
export function authorize<V>(
  routes: LangGraphRoutes,
  request: FastifyRequest,
  event: string,
  value: V,
): Promise<{ filters?: AuthFilters; value: V }> {
  return routes.auth === undefined ? Promise.resolve({ value }) : routes.auth.authorize(request, event, value);
}

/** `threads:<action>` on a thread: a 404, as for a thread that is not there, unless its metadata passes the filters. */
export async function guardThread(
  routes: LangGraphRoutes,
  request: FastifyRequest,
  scope: string,
  threadId: string,
  action: "read" | "update" | "delete",
  value: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const authorized = await authorize(routes, request, `threads:${action}`, { thread_id: threadId, ...value });
  await passes(routes, scope, threadId, authorized.filters);
  return authorized.value;
}

/**
 * `threads:read` on a thread of protocol v2, which a command's `run.start` may make: one that is
 * there must pass the filters (404 otherwise); one that is not is the caller's to make.
 */
export async function guardProtocolThread(
  routes: LangGraphRoutes,
  request: FastifyRequest,
  scope: string,
  threadId: string,
): Promise<void> {
  await watchProtocolThread(routes, request, scope, threadId);
}

/** Whether what a thread's log holds may still reach its follower; false once it may not. */
export type ThreadWatch = () => Promise<boolean>;

/**
 * `threads:read` for a follower of a protocol v2 thread (SSE, WebSocket): a thread that is there
 * must pass the filters now (404 otherwise); one that is not yet there is checked again when
 * something of it is about to reach the follower, since another user's `run.start` may make it
 * theirs meanwhile. The answer is a check to call before each event: once the thread is seen
 * and passes, it passes for the follower's life; a thread still not recorded, or another user's,
 * never does (an event without a record fails closed).
 */
export async function watchProtocolThread(
  routes: LangGraphRoutes,
  request: FastifyRequest,
  scope: string,
  threadId: string,
): Promise<ThreadWatch> {
  const { filters } = await authorize(routes, request, "threads:read", { thread_id: threadId });
  const always: ThreadWatch = () => Promise.resolve(true);
  if (filters === undefined) return always;
  const thread = await routes.threads.find(scope, threadId);
  if (thread !== undefined) {
    if (!matchesFilters(thread.metadata, filters)) throw new AgentNotFoundError("thread", threadId);
    return always;
  }
  let verdict: boolean | undefined;
  return async () => {
    if (verdict === undefined) {
      const made = await routes.threads.find(scope, threadId);
      verdict = made !== undefined && matchesFilters(made.metadata, filters);
      if (!verdict) request.log.info({ threadId }, "a protocol v2 follower's thread was made by another user: its stream ends");
    }
    return verdict;
  };
}

/** 404 for a thread whose metadata does not pass `filters` (nothing to check without them). */
async function passes(routes: LangGraphRoutes, scope: string, threadId: string, filters: AuthFilters | undefined): Promise<void> {
  if (filters === undefined) return;
  const thread = await routes.threads.record(scope, threadId);
  if (!matchesFilters(thread.metadata, filters)) throw new AgentNotFoundError("thread", threadId);
}

/**
 * `threads:create_run` for a run about to be made: its thread, when it has one already, must
 * pass the filters (404 otherwise); the metadata the handler left is the run's (and a new
 * thread's); the graph gets the user in `config.configurable` as on LangGraph's server.
 */
export async function guardRunCreate(
  routes: LangGraphRoutes,
  request: FastifyRequest,
  scope: string,
  threadId: string | undefined,
  run: AgentRunRequest,
): Promise<void> {
  if (routes.auth === undefined) return;
  const { filters, value } = await authorize(routes, request, "threads:create_run", {
    thread_id: threadId,
    assistant_id: run.assistantId,
    status: "pending",
    metadata: { ...run.metadata },
    multitask_strategy: run.multitaskStrategy,
    if_not_exists: run.ifNotExists,
    after_seconds: 0,
    kwargs: { input: run.input, command: run.command, config: run.config, context: run.context },
  });
  run.metadata = value.metadata ?? {};
  if (threadId !== undefined && filters !== undefined) {
    const thread = await backendCall("the thread records", routes.backendTimeoutMs, () => routes.records.getThread(scope, threadId));
    if (thread !== undefined && !matchesFilters(thread.metadata, filters)) throw new AgentNotFoundError("thread", threadId);
  }
  const context = request.chatServeCaller?.authUser;
  if (context !== undefined) {
    run.config = {
      ...run.config,
      configurable: {
        ...run.config.configurable,
        langgraph_auth_user: context.user,
        langgraph_auth_user_id: context.user.identity,
        langgraph_auth_permissions: context.scopes,
      },
    };
  }
}

/** The records of a search that pass the filters of its handler (`threads:search`, `assistants:search`). */
export function visible<T extends { metadata?: Record<string, unknown> | null }>(found: T[], filters: AuthFilters | undefined): T[] {
  return filters === undefined ? found : found.filter((record) => matchesFilters(record.metadata ?? undefined, filters));
}
