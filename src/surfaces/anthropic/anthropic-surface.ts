import type { FastifyInstance } from "fastify";
import { anthropicErrorBody } from "../../dialects/anthropic/anthropic-error.js";
import type { Surface, SurfaceContext } from "../../http/surface.js";

/**
 * The Anthropic Messages API at `/messages` and `/messages/count_tokens`: Claude Code (through
 * `ANTHROPIC_BASE_URL`) and the Anthropic SDKs talk to a graph as to a Claude model
 * (docs/anthropic.md). Its errors are Anthropic's shape: in the API's mount, it answers them
 * from a scope of its own (the shared server gives one to a surface with its own shape).
 */
export function anthropicSurface(): Surface {
  return {
    name: "anthropic",
    register: (app: FastifyInstance, context: SurfaceContext) => {
      // The dialect (its schemas) loads on the first request.
      const route = () => import("./messages-route.js");
      app.post(
        "/messages",
        { bodyLimit: context.bodyLimit, schema: { summary: "Run a graph as an Anthropic Message", tags: ["anthropic"] } },
        async (request, reply) => (await route()).answerMessages(request, reply, context),
      );
      app.post(
        "/messages/count_tokens",
        { bodyLimit: context.bodyLimit, schema: { summary: "Count an Anthropic Messages request's input tokens", tags: ["anthropic"] } },
        async (request) => (await route()).countMessageTokens(request, context),
      );
    },
    methods: { "/messages": ["POST"], "/messages/count_tokens": ["POST"] },
    apiLabels: { "/messages": "anthropic", "/messages/count_tokens": "anthropic" },
    runPaths: ["/messages"],
    errorBody: anthropicErrorBody,
    // Anthropic's clients add `/v1/messages` to their base URL.
    bannerRows: (base) => [
      [
        "anthropic",
        `${base}/messages  (${base.endsWith("/v1") ? `Claude Code: ANTHROPIC_BASE_URL=${base.slice(0, -"/v1".length)}` : "Anthropic clients add /v1 to their base URL: use a prefix that ends in /v1"})`,
      ],
    ],
  };
}
