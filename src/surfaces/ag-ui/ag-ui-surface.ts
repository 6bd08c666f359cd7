import { RouteTable, registerLazyRoutes } from "../../http/lazy-routes.js";
import type { Surface } from "../../http/surface.js";

type ModelParams = { Params: { model: string } };

/**
 * AG-UI 1.0 at `/ag-ui/{model}`: `@ag-ui/client`'s `HttpAgent` and CopilotKit run a graph with
 * no adapter (docs/ag-ui.md). `threadId` is the thread; a graph's pause ends the run with the
 * `interrupt` outcome, answered by the next run's `resume`. The dialect and `@ag-ui/core`'s
 * schemas load with the first request, or once the server has answered its first (`Surface.warm`).
 */
export function agUiSurface(): Surface {
  const methods = { "/ag-ui/:model": ["POST"] } as const;
  return {
    name: "ag-ui",
    register: (app, context) => {
      registerLazyRoutes(
        app,
        methods,
        async () => {
          const { answerRunInput } = await import("./ag-ui-route.js");
          const table = new RouteTable();
          table.post<ModelParams>("/ag-ui/:model", (request, reply) => answerRunInput(request, reply, context));
          return table;
        },
        {
          "POST /ag-ui/:model": {
            bodyLimit: context.bodyLimit,
            schema: { summary: "Run a graph as an AG-UI agent (RunAgentInput in, events out)", tags: ["ag-ui"] },
          },
        },
      );
    },
    methods,
    apiLabels: { "/ag-ui/:model": "ag-ui" },
    runPaths: ["/ag-ui/:model"],
    bannerRows: (base) => [["ag-ui", `${base}/ag-ui/{model}  (AG-UI 1.0: HttpAgent, CopilotKit)`]],
    warm: async () => {
      await import("./ag-ui-route.js");
    },
  };
}
