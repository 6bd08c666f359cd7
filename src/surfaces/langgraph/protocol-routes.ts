import { isSupportedChannel, matchesSubscription } from "@langchain/langgraph/stream";
import { z } from "zod";
import type { RouteTable } from "../../http/lazy-routes.js";
import type { LoggedProtocolEvent, ProtocolEvent, ProtocolFilter } from "../../runs/agent/protocol-log.js";
import type { ProtocolCommand } from "../../runs/agent/protocol-threads.js";
import type { LoggedEvent } from "../../runs/agent/run-events.js";
import { clientGone, writeAgentSse } from "./agent-sse.js";
import type { LangGraphRoutes } from "./langgraph-routes.js";
import { parseBody } from "./langgraph-schemas.js";
import type { ProtocolSocketDeps } from "./protocol-socket.js";
import { guardProtocolThread, guardRunCreate, type ThreadWatch, watchProtocolThread } from "./route-auth.js";

type ThreadParams = { Params: { thread_id: string } };

const protocolCommand = z.object({
  id: z.number().int().nonnegative(),
  method: z.string().min(1),
  params: z.record(z.string(), z.unknown()).nullish(),
});

const eventsFilter = z.object({
  channels: z.array(
    z
      .string()
      .refine(
        isSupportedChannel,
        "is not a channel of the protocol (values, updates, messages, tools, lifecycle, input, checkpoints, tasks, custom, custom:NAME)",
      ),
  ),
  namespaces: z.array(z.array(z.string())).nullish(),
  depth: z.number().int().nonnegative().nullish(),
  since: z.number().int().nonnegative().nullish(),
});

/** A protocol event filter matches as LangGraph's own subscriptions do. */
export function matchesFilter(event: ProtocolEvent, filter: ProtocolFilter): boolean {
  return matchesSubscription(event, {
    channels: filter.channels as Parameters<typeof matchesSubscription>[1]["channels"],
    ...(filter.namespaces === undefined ? {} : { namespaces: filter.namespaces }),
    ...(filter.depth === undefined ? {} : { depth: filter.depth }),
  });
}

/** The thread's events as SSE frames, for as long as the follower may see the thread (then the stream ends). */
async function* asSse(events: AsyncIterable<LoggedProtocolEvent>, allowed: ThreadWatch): AsyncGenerator<LoggedEvent> {
  for await (const { event, json } of events) {
    if (!(await allowed())) return;
    yield { id: event.seq, event: event.method, json };
  }
}

/**
 * Protocol v2: commands on a thread (`run.start`, `input.respond`, `state.get`,
 * `agent.getTree`) over HTTP, and the thread's events as SSE, filtered by channel and
 * namespace, replayed from `since`, open for as long as the client follows the thread; or
 * both over one WebSocket, with `subscription.subscribe` and `subscription.unsubscribe`.
 */
export function registerProtocolRoutes(on: RouteTable, routes: LangGraphRoutes): ProtocolSocketDeps {
  const { runs, protocol } = routes;

  const parseCommand = (body: unknown): ProtocolCommand => {
    const command = parseBody(protocolCommand, body, "command");
    return { id: command.id, method: command.method, params: command.params ?? {} };
  };
  const parseFilter = (body: unknown): ProtocolFilter => {
    const parsed = parseBody(eventsFilter, body, "event filter");
    return {
      channels: parsed.channels,
      ...(parsed.namespaces == null ? {} : { namespaces: parsed.namespaces }),
      ...(parsed.depth == null ? {} : { depth: parsed.depth }),
      ...(parsed.since == null ? {} : { since: parsed.since }),
    };
  };

  on.post<ThreadParams>("/threads/:thread_id/commands", async (request, reply) => {
    const command = parseCommand(request.body);
    const scope = await routes.scopeOf(request);
    const threadId = request.params.thread_id;
    await guardProtocolThread(routes, request, scope, threadId);
    return protocol.command(scope, threadId, command, async (asked) => {
      const { run, model } = await routes.prepareRun(request, scope, asked);
      await guardRunCreate(routes, request, scope, threadId, run);
      // Counted against the tenant's and the model's limits, as every run is.
      const admission = await routes.limits?.admit(request, reply, model);
      try {
        return await runs.startInBackground(scope, threadId, run, admission);
      } catch (error) {
        await admission?.();
        throw error;
      }
    });
  });

  on.post<ThreadParams>("/threads/:thread_id/stream/events", async (request, reply) => {
    const filter = parseFilter(request.body);
    const scope = await routes.scopeOf(request);
    const allowed = await watchProtocolThread(routes, request, scope, request.params.thread_id);
    const gone = clientGone(reply);
    try {
      await writeAgentSse(reply, asSse(protocol.follow(scope, request.params.thread_id, filter, gone.signal), allowed), {
        keepAliveMs: routes.keepAliveMs,
        stalledClientMs: routes.stalledClientMs,
        ids: true,
      });
    } finally {
      gone.dispose();
    }
  });

  // The same thread over a WebSocket: the socket's route is the surface's own (it upgrades first).
  return { routes, parseCommand, parseFilter, matches: matchesFilter };
}
