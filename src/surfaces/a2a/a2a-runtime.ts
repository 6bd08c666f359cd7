import { PassThrough } from "node:stream";
import { AgentCard, formatSSEErrorEvent, formatSSEEvent, SSE_HEADERS } from "@a2a-js/sdk";
import { LegacyJsonRpcTransportHandler } from "@a2a-js/sdk/compat/v0_3/server";
import { JsonRpcTransportHandler, ServerCallContext } from "@a2a-js/sdk/server";
import type { FastifyReply, FastifyRequest } from "fastify";
import { agentCard } from "../../dialects/a2a/agent-card.js";
import { A2aAgent, setCall } from "./a2a-agent.js";
import { type A2aRouteOptions, baseOf } from "./a2a-route.js";

// The part of the A2A routes that needs the A2A SDK: the agents, their cards and their
// JSON-RPC handlers, made on the first request that needs them.

interface Agent {
  agent: A2aAgent;
  current: JsonRpcTransportHandler;
  legacy: LegacyJsonRpcTransportHandler;
}

/** Every model's agent, card and JSON-RPC handlers (both protocol versions): what the routes call once the SDK is loaded. */
export function a2aRuntimeOf(options: A2aRouteOptions) {
  const { registry, prefix } = options;
  const agents = new Map<string, Agent>();
  for (const model of registry.getGraphNames()) {
    const agent = new A2aAgent(
      model,
      options,
      agentCard({
        ...registry.getGraph(model),
        model,
        url: `${prefix}/a2a/${encodeURIComponent(model)}`,
        auth: options.auth,
        version: options.version,
      }),
    );
    agents.set(model, { agent, current: new JsonRpcTransportHandler(agent), legacy: new LegacyJsonRpcTransportHandler(agent) });
  }
  return {
    /** A model's card, as JSON, with the URL the client reached the server at. */
    card(request: FastifyRequest, model: string): unknown {
      const config = registry.getGraph(model);
      const url = `${baseOf(request, prefix)}/${encodeURIComponent(model)}`;
      return AgentCard.toJSON(
        agentCard({ model, description: config.description, features: config.features, url, auth: options.auth, version: options.version }),
      );
    },
    /** Answers a JSON-RPC request the route has checked, in the version the client speaks. */
    async handle(request: FastifyRequest, reply: FastifyReply, model: string, body: Record<string, unknown>, version: string) {
      const { current, legacy } = agents.get(model)!;
      const left = new AbortController();
      reply.raw.once("close", () => left.abort());
      const context = new ServerCallContext({ requestedVersion: version });
      setCall(context, { request, reply, signal: left.signal });
      const answer = await (version === "0.3" ? legacy : current).handle(body, context);
      if (!(Symbol.asyncIterator in answer)) return reply.type("application/json").send(answer);
      return sendStream(reply, answer, body.id, options.keepAliveMs, version === "0.3");
    },
  };
}

/**
 * A streamed answer as server-sent events. An error before the first event is a plain
 * JSON-RPC error; one after is an error event. Comments keep an idle stream open.
 */
async function sendStream(
  reply: FastifyReply,
  stream: AsyncGenerator<unknown, void, undefined>,
  id: unknown,
  keepAliveMs: number,
  legacy: boolean,
) {
  const mapError = legacy ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError : JsonRpcTransportHandler.mapToJSONRPCError;
  const envelope = (error: unknown) => ({
    jsonrpc: "2.0",
    id: typeof id === "string" || typeof id === "number" ? id : null,
    error: mapError(error),
  });
  let first: IteratorResult<unknown>;
  try {
    first = await stream.next();
  } catch (error) {
    return reply.type("application/json").send(envelope(error));
  }
  for (const [name, value] of Object.entries(SSE_HEADERS)) reply.header(name, value);
  const events = new PassThrough();
  const keepAlive = setInterval(() => events.write(": keep-alive\n\n"), keepAliveMs);
  reply.raw.once("close", () => clearInterval(keepAlive));
  void (async () => {
    try {
      if (first.done !== true) events.write(formatSSEEvent(first.value));
      for await (const event of { [Symbol.asyncIterator]: () => stream }) events.write(formatSSEEvent(event));
    } catch (error) {
      events.write(formatSSEErrorEvent(envelope(error)));
    } finally {
      clearInterval(keepAlive);
      events.end();
    }
  })();
  return reply.send(events);
}
