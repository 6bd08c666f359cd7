import { RouteTable, registerLazyRoutes } from "../../http/lazy-routes.js";
import type { Surface } from "../../http/surface.js";

type ModelParams = { Params: { model: string } };

/**
 * The AI SDK's UI message stream at `/ai-sdk/{model}`: `useChat` with
 * `DefaultChatTransport({ api })` talks to a graph with no server code of its own
 * (docs/ai-sdk.md). The chat id names the session; a graph's pause is a `graph_interrupt`
 * tool part the page answers with `addToolOutput`. The dialect (its schemas) loads with the
 * first request, or once the server has answered its first (`Surface.warm`).
 */
export function aiSdkSurface(): Surface {
  const methods = { "/ai-sdk/:model": ["POST"] } as const;
  return {
    name: "ai-sdk",
    register: (app, context) => {
      registerLazyRoutes(
        app,
        methods,
        async () => {
          const { answerUiRequest } = await import("./ai-sdk-route.js");
          const table = new RouteTable();
          table.post<ModelParams>("/ai-sdk/:model", (request, reply) => answerUiRequest(request, reply, context));
          return table;
        },
        {
          "POST /ai-sdk/:model": {
            bodyLimit: context.bodyLimit,
            schema: { summary: "Run a graph for the AI SDK's useChat (UI message stream)", tags: ["ai-sdk"] },
          },
        },
      );
    },
    methods,
    apiLabels: { "/ai-sdk/:model": "ai-sdk" },
    runPaths: ["/ai-sdk/:model"],
    bannerRows: (base) => [["ai-sdk", `${base}/ai-sdk/{model}  (useChat's UI message stream)`]],
    warm: async () => {
      await import("./ai-sdk-route.js");
    },
  };
}
