import { registerLazyPost } from "../../http/lazy-routes.js";
import type { Surface, SurfaceSwitch } from "../../http/surface.js";

/**
 * AG-UI 1.0 at `/ag-ui/{model}`: `@ag-ui/client`'s `HttpAgent` and CopilotKit run a graph with
 * no adapter (docs/ag-ui.md). `threadId` is the thread; a graph's pause ends the run with the
 * `interrupt` outcome, answered by the next run's `resume`. The dialect and `@ag-ui/core`'s
 * schemas load with the first request, or once the server has answered its first (`Surface.warm`).
 */
function agUiSurface(): Surface {
  return {
    name: "ag-ui",
    register: (app, context) =>
      registerLazyPost<{ Params: { model: string } }>(
        app,
        "/ag-ui/:model",
        { bodyLimit: context.bodyLimit, summary: "Run a graph as an AG-UI agent (RunAgentInput in, events out)", tag: "ag-ui" },
        async () => {
          const { answerRunInput } = await import("./ag-ui-route.js");
          return (request, reply) => answerRunInput(request, reply, context);
        },
      ),
    methods: { "/ag-ui/:model": ["POST"] },
    apiLabels: { "/ag-ui/:model": "ag-ui" },
    runPaths: ["/ag-ui/:model"],
    bannerRows: (base) => [["ag-ui", `${base}/ag-ui/{model}  (AG-UI 1.0: HttpAgent, CopilotKit)`]],
    warm: async () => {
      await import("./ag-ui-route.js");
    },
  };
}

/** `server.agUi` / `bind({ agUi })`: AG-UI 1.0; on for `start` unless the config turns it off, off for `bind()` unless asked. */
export const agUiSwitch: SurfaceSwitch<"agUi", true> = {
  key: "agUi",
  fromConfig: (value) => value !== false,
  bindDefault: () => false,
  surfaces: () => [agUiSurface()],
};
