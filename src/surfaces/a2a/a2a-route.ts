import { PassThrough } from "node:stream";
import { AgentCard, formatSSEErrorEvent, formatSSEEvent, SSE_HEADERS } from "@a2a-js/sdk";
import { LegacyJsonRpcTransportHandler } from "@a2a-js/sdk/compat/v0_3/server";
import { JsonRpcTransportHandler, ServerCallContext } from "@a2a-js/sdk/server";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import secureJson from "secure-json-parse";
import { A2A_VERSIONS, agentCard } from "../../dialects/a2a/agent-card.js";
import { assertVisible } from "../../http/visibility.js";
import { A2aAgent, type A2aAgentOptions, setCall } from "./a2a-agent.js";

export interface A2aRouteOptions extends A2aAgentOptions {
  prefix: string;
  /** The server asks for API keys: the cards name the Bearer scheme. */
  auth: boolean;
  version: string;
  isDraining: () => boolean;
}

/** The methods that start a run, in either protocol version: a draining server refuses them, limits count them. */
const STARTS_RUN = new Set(["SendMessage", "SendStreamingMessage", "message/send", "message/stream"]);

/** The A2A base URL of a request: where the server is, as the client reached it. */
const baseOf = (request: FastifyRequest, prefix: string) => `${request.protocol}://${request.host}${prefix}/a2a`;

const rpcError = (reply: FastifyReply, status: number, id: unknown, code: number, message: string) =>
  reply
    .status(status)
    .type("application/json")
    .send({ jsonrpc: "2.0", id: typeof id === "string" || typeof id === "number" ? id : null, error: { code, message } });

interface Agent {
  agent: A2aAgent;
  current: JsonRpcTransportHandler;
  legacy: LegacyJsonRpcTransportHandler;
}

/**
 * `{prefix}/a2a`: every model an A2A agent. `GET /a2a` lists the cards, `GET
 * /a2a/{model}/.well-known/agent-card.json` is one, and `POST /a2a/{model}` its JSON-RPC
 * endpoint (A2A 1.0, and 0.3 for clients that send no `A2A-Version` or 0.3), through the
 * official SDK's transport handlers.
 */
export async function registerA2aRoutes(app: FastifyInstance, options: A2aRouteOptions): Promise<void> {
  const { registry, prefix } = options;
  const cardFor = (request: FastifyRequest, model: string) => {
    const config = registry.getGraph(model);
    const url = `${baseOf(request, prefix)}/${encodeURIComponent(model)}`;
    return agentCard({
      model,
      description: config.description,
      features: config.features,
      url,
      auth: options.auth,
      version: options.version,
    });
  };
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
  const agentOf = (request: FastifyRequest): Agent => {
    const model = (request.params as { model: string }).model;
    const agent = agents.get(model);
    if (agent === undefined) throw registry.modelNotFound(model, registry.getGraphNames());
    return agent;
  };

  app.get("/a2a", { schema: { summary: "The index of the A2A agent cards", tags: ["a2a"] } }, async (request) => ({
    agents: [...agents.keys()].map((model) => {
      const url = `${baseOf(request, prefix)}/${encodeURIComponent(model)}`;
      return { name: model, description: registry.getGraph(model).description, url, card: `${url}/.well-known/agent-card.json` };
    }),
  }));

  app.get("/a2a/:model/.well-known/agent-card.json", { schema: { summary: "A model's A2A agent card", tags: ["a2a"] } }, async (request) =>
    AgentCard.toJSON(cardFor(request, agentOf(request).agent.model)),
  );

  await app.register(async (scope) => {
    // The body is read here, so malformed JSON gets JSON-RPC's parse error whatever its type says.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", { parseAs: "string" }, (_request, body, done) => done(null, body));
    scope.post("/a2a/:model", { schema: { summary: "A model's A2A JSON-RPC endpoint", tags: ["a2a"] } }, async (request, reply) => {
      const { agent, current, legacy } = agentOf(request);
      assertVisible(registry, request.chatServeCaller, agent.model);
      const type = request.headers["content-type"]?.split(";")[0]?.trim().toLowerCase();
      if (type !== undefined && type !== "application/json") {
        return rpcError(reply, 200, null, -32005, `This endpoint takes application/json, not ${type}.`);
      }
      let body: unknown;
      try {
        body = secureJson.parse(String(request.body ?? ""), undefined, { protoAction: "error", constructorAction: "error" });
      } catch {
        return rpcError(reply, 200, null, -32700, "Parse error: the body is not valid JSON.");
      }
      if (typeof body !== "object" || body === null) {
        return rpcError(reply, 200, null, -32600, "Invalid Request: the body must be a JSON-RPC request object.");
      }
      const { id, method } = body as { id?: unknown; method?: unknown };
      const version = String(request.headers["a2a-version"] ?? "0.3").trim() || "0.3";
      if (!(A2A_VERSIONS as readonly string[]).includes(version)) {
        return rpcError(
          reply,
          200,
          id,
          -32009,
          `A2A version ${version} is not served here; send A2A-Version: ${A2A_VERSIONS.join(" or ")}.`,
        );
      }
      if (typeof method === "string" && STARTS_RUN.has(method)) {
        if (options.isDraining()) {
          reply.header("retry-after", "1");
          return rpcError(
            reply,
            503,
            id,
            -32603,
            "The server is shutting down and starts no new tasks; retry, and another instance will answer.",
          );
        }
        // A message counts against the request rate like any run; the queue bounds how many run at once.
        const release = await options.limits?.admit(request, reply, agent.model);
        await release?.();
      }
      const left = new AbortController();
      reply.raw.once("close", () => left.abort());
      const context = new ServerCallContext({ requestedVersion: version });
      setCall(context, { request, reply, signal: left.signal });
      const answer = await (version === "0.3" ? legacy : current).handle(body as Record<string, unknown>, context);
      if (!(Symbol.asyncIterator in answer)) return reply.type("application/json").send(answer);
      return sendStream(reply, answer, id, options.keepAliveMs, version === "0.3");
    });
  });
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
