import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import secureJson from "secure-json-parse";
import { A2A_VERSIONS } from "../../dialects/a2a/agent-card.js";
import { selfUrl } from "../../http/self-url.js";
import { assertVisible } from "../../http/visibility.js";
import type { A2aAgentOptions } from "./a2a-agent.js";

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
export const baseOf = (request: FastifyRequest, prefix: string) => selfUrl(request, `${prefix}/a2a`);

const rpcError = (reply: FastifyReply, status: number, id: unknown, code: number, message: string) =>
  reply
    .status(status)
    .type("application/json")
    .send({ jsonrpc: "2.0", id: typeof id === "string" || typeof id === "number" ? id : null, error: { code, message } });

/**
 * `{prefix}/a2a`: every model an A2A agent. `GET /a2a` lists the cards, `GET
 * /a2a/{model}/.well-known/agent-card.json` is one, and `POST /a2a/{model}` its JSON-RPC
 * endpoint (A2A 1.0, and 0.3 for clients that send no `A2A-Version` or 0.3), through the
 * official SDK's transport handlers.
 */
export async function registerA2aRoutes(app: FastifyInstance, options: A2aRouteOptions): Promise<void> {
  const { registry, prefix } = options;
  // The A2A SDK loads with the first request that needs it (the card list does not).
  let runtime: Promise<ReturnType<typeof import("./a2a-runtime.js")["a2aRuntimeOf"]>> | undefined;
  const loadRuntime = () => (runtime ??= import("./a2a-runtime.js").then((module) => module.a2aRuntimeOf(options)));
  const modelOf = (request: FastifyRequest): string => {
    const model = (request.params as { model: string }).model;
    if (!registry.getGraphNames().includes(model)) throw registry.modelNotFound(model, registry.getGraphNames());
    return model;
  };

  app.get("/a2a", { schema: { summary: "The index of the A2A agent cards", tags: ["a2a"] } }, async (request) => ({
    agents: registry.getGraphNames().map((model) => {
      const url = `${baseOf(request, prefix)}/${encodeURIComponent(model)}`;
      return { name: model, description: registry.getGraph(model).description, url, card: `${url}/.well-known/agent-card.json` };
    }),
  }));

  app.get(
    "/a2a/:model/.well-known/agent-card.json",
    { schema: { summary: "A model's A2A agent card", tags: ["a2a"] } },
    async (request) => {
      const model = modelOf(request);
      return (await loadRuntime()).card(request, model);
    },
  );

  await app.register(async (scope) => {
    // The body is read here, so malformed JSON gets JSON-RPC's parse error whatever its type says.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", { parseAs: "string" }, (_request, body, done) => done(null, body));
    scope.post("/a2a/:model", { schema: { summary: "A model's A2A JSON-RPC endpoint", tags: ["a2a"] } }, async (request, reply) => {
      const model = modelOf(request);
      assertVisible(registry, request.chatServeCaller, model);
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
        const release = await options.limits?.admit(request, reply, model);
        await release?.();
      }
      return (await loadRuntime()).handle(request, reply, model, body as Record<string, unknown>, version);
    });
  });
}
