import type { FastifyInstance } from "fastify";
import type { Surface, SurfaceContext } from "../../http/surface.js";

type ModelParams = { Params: { model: string } };

/**
 * AG-UI 1.0 at `/ag-ui/{model}`: `@ag-ui/client`'s `HttpAgent` and CopilotKit run a graph with
 * no adapter (docs/ag-ui.md). `threadId` is the thread; a graph's pause ends the run with the
 * `interrupt` outcome, answered by the next run's `resume`.
 */
export function agUiSurface(): Surface {
  return {
    name: "ag-ui",
    register: (app: FastifyInstance, context: SurfaceContext) => {
      app.post<ModelParams>(
        "/ag-ui/:model",
        {
          bodyLimit: context.bodyLimit,
          schema: { summary: "Run a graph as an AG-UI agent (RunAgentInput in, events out)", tags: ["ag-ui"] },
        },
        // The dialect and @ag-ui/core's schemas load on the first request.
        async (request, reply) => (await import("./ag-ui-route.js")).answerRunInput(request, reply, context),
      );
    },
    methods: { "/ag-ui/:model": ["POST"] },
    apiLabels: { "/ag-ui/:model": "ag-ui" },
    runPaths: ["/ag-ui/:model"],
    bannerRows: (base) => [["ag-ui", `${base}/ag-ui/{model}  (AG-UI 1.0: HttpAgent, CopilotKit)`]],
  };
}
