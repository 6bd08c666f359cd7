import type { FastifyInstance } from "fastify";
import type { Surface, SurfaceContext } from "../../http/surface.js";

type ModelParams = { Params: { model: string } };

/**
 * The AI SDK's UI message stream at `/ai-sdk/{model}`: `useChat` with
 * `DefaultChatTransport({ api })` talks to a graph with no server code of its own
 * (docs/ai-sdk.md). The chat id names the session; a graph's pause is a `graph_interrupt`
 * tool part the page answers with `addToolOutput`.
 */
export function aiSdkSurface(): Surface {
  return {
    name: "ai-sdk",
    register: (app: FastifyInstance, context: SurfaceContext) => {
      app.post<ModelParams>(
        "/ai-sdk/:model",
        { bodyLimit: context.bodyLimit, schema: { summary: "Run a graph for the AI SDK's useChat (UI message stream)", tags: ["ai-sdk"] } },
        // The dialect (its schemas) loads on the first request.
        async (request, reply) => (await import("./ai-sdk-route.js")).answerUiRequest(request, reply, context),
      );
    },
    methods: { "/ai-sdk/:model": ["POST"] },
    apiLabels: { "/ai-sdk/:model": "ai-sdk" },
    runPaths: ["/ai-sdk/:model"],
    bannerRows: (base) => [["ai-sdk", `${base}/ai-sdk/{model}  (useChat's UI message stream)`]],
  };
}
