import { anthropicErrorBody } from "../../dialects/anthropic/anthropic-error.js";
import { RouteTable, registerLazyRoutes } from "../../http/lazy-routes.js";
import type { Surface, SurfaceSwitch } from "../../http/surface.js";

const METHODS = { "/messages": ["POST"], "/messages/count_tokens": ["POST"] } as const;

/**
 * The Anthropic Messages API at `/messages` and `/messages/count_tokens`: Claude Code (through
 * `ANTHROPIC_BASE_URL`) and the Anthropic SDKs talk to a graph as to a Claude model
 * (docs/anthropic.md). Its errors are Anthropic's shape: in the API's mount, it answers them
 * from a scope of its own (the shared server gives one to a surface with its own shape).
 */
function anthropicSurface(): Surface {
  return {
    name: "anthropic",
    register: (app, context) => {
      // The dialect (its schemas) and the run engine load on the first request.
      registerLazyRoutes(
        app,
        METHODS,
        async () => {
          const { answerMessages, countMessageTokens } = await import("./messages-route.js");
          const table = new RouteTable();
          table.post("/messages", (request, reply) => answerMessages(request, reply, context));
          table.post("/messages/count_tokens", async (request) => countMessageTokens(request, context));
          return table;
        },
        {
          "POST /messages": {
            bodyLimit: context.bodyLimit,
            schema: { summary: "Run a graph as an Anthropic Message", tags: ["anthropic"] },
          },
          "POST /messages/count_tokens": {
            bodyLimit: context.bodyLimit,
            schema: { summary: "Count an Anthropic Messages request's input tokens", tags: ["anthropic"] },
          },
        },
      );
    },
    methods: METHODS,
    apiLabels: { "/messages": "anthropic", "/messages/count_tokens": "anthropic" },
    runPaths: ["/messages"],
    errorBody: anthropicErrorBody,
    warm: async () => {
      await import("./messages-route.js");
    },
    // Anthropic's clients add `/v1/messages` to their base URL.
    bannerRows: (base) => [
      [
        "anthropic",
        `${base}/messages  (${base.endsWith("/v1") ? `Claude Code: ANTHROPIC_BASE_URL=${base.slice(0, -"/v1".length)}` : "Anthropic clients add /v1 to their base URL: use a prefix that ends in /v1"})`,
      ],
    ],
  };
}

/** `server.anthropic` / `bind({ anthropic })`: the Anthropic Messages API; on for `start` unless the config turns it off, off for `bind()` unless asked. */
export const anthropicSwitch: SurfaceSwitch<"anthropic", true> = {
  key: "anthropic",
  fromConfig: (value) => value !== false,
  bindDefault: () => false,
  surfaces: () => [anthropicSurface()],
};
