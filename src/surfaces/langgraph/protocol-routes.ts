import { isSupportedChannel, matchesSubscription } from "@langchain/langgraph/stream";
import { z } from "zod";
import type { RouteTable } from "../../http/lazy-routes.js";
import type { LoggedProtocolEvent, ProtocolEvent, ProtocolFilter } from "../../runs/agent/protocol-log.js";
import type { LoggedEvent } from "../../runs/agent/run-events.js";
import { clientGone, writeAgentSse } from "./agent-sse.js";
import type { LangGraphRoutes } from "./langgraph-routes.js";
import { parseBody } from "./langgraph-schemas.js";

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

async function* asSse(events: AsyncIterable<LoggedProtocolEvent>): AsyncGenerator<LoggedEvent> {
  for await (const { event, json } of events) yield { id: event.seq, event: event.method, json };
}

/**
 * Protocol v2 over HTTP: commands on a thread (`run.start`, `input.respond`, `state.get`,
 * `agent.getTree`), and the thread's events as SSE, filtered by channel and namespace,
 * replayed from `since`, open for as long as the client follows the thread.
 */
export function registerProtocolRoutes(on: RouteTable, routes: LangGraphRoutes): void {
  const { runs, protocol } = routes;

  on.post<ThreadParams>("/threads/:thread_id/commands", async (request, reply) => {
    const command = parseBody(protocolCommand, request.body, "command");
    const scope = await routes.scopeOf(request);
    const threadId = request.params.thread_id;
    return protocol.command(scope, threadId, { id: command.id, method: command.method, params: command.params ?? {} }, async (run) => {
      const model = routes.modelOf(request, run.assistantId);
      // Counted against the tenant's and the model's limits, as every run is.
      const admission = await routes.limits?.admit(request, reply, model);
      try {
        return (await runs.start(scope, threadId, run, admission)).run;
      } catch (error) {
        await admission?.();
        throw error;
      }
    });
  });

  on.post<ThreadParams>("/threads/:thread_id/stream/events", async (request, reply) => {
    const body = parseBody(eventsFilter, request.body, "event filter");
    const filter: ProtocolFilter = {
      channels: body.channels,
      ...(body.namespaces == null ? {} : { namespaces: body.namespaces }),
      ...(body.depth == null ? {} : { depth: body.depth }),
      ...(body.since == null ? {} : { since: body.since }),
    };
    const scope = await routes.scopeOf(request);
    const gone = clientGone(reply);
    try {
      await writeAgentSse(reply, asSse(protocol.follow(scope, request.params.thread_id, filter, gone.signal)), {
        keepAliveMs: routes.keepAliveMs,
        ids: true,
      });
    } finally {
      gone.dispose();
    }
  });
}
