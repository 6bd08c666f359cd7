import { registerLazyPost } from "../../http/lazy-routes.js";
import type { Surface, SurfaceSwitch } from "../../http/surface.js";

/**
 * The AI SDK's UI message stream at `/ai-sdk/{model}`: `useChat` with
 * `DefaultChatTransport({ api })` talks to a graph with no server code of its own
 * (docs/ai-sdk.md). The chat id names the session; a graph's pause is a `graph_interrupt`
 * tool part the page answers with `addToolOutput`. The dialect (its schemas) loads with the
 * first request, or once the server has answered its first (`Surface.warm`).
 */
function aiSdkSurface(): Surface {
  return {
    name: "ai-sdk",
    register: (app, context) =>
      registerLazyPost<{ Params: { model: string } }>(
        app,
        "/ai-sdk/:model",
        { bodyLimit: context.bodyLimit, summary: "Run a graph for the AI SDK's useChat (UI message stream)", tag: "ai-sdk" },
        async () => {
          const { answerUiRequest } = await import("./ai-sdk-route.js");
          return (request, reply) => answerUiRequest(request, reply, context);
        },
      ),
    methods: { "/ai-sdk/:model": ["POST"] },
    apiLabels: { "/ai-sdk/:model": "ai-sdk" },
    runPaths: ["/ai-sdk/:model"],
    bannerRows: (base) => [["ai-sdk", `${base}/ai-sdk/{model}  (useChat's UI message stream)`]],
    warm: async () => {
      await import("./ai-sdk-route.js");
    },
  };
}

/** `server.aiSdk` / `bind({ aiSdk })`: the AI SDK's `useChat` stream; on for `start` unless the config turns it off, off for `bind()` unless asked. */
export const aiSdkSwitch: SurfaceSwitch<"aiSdk", true> = {
  key: "aiSdk",
  fromConfig: (value) => value !== false,
  bindDefault: () => false,
  surfaces: () => [aiSdkSurface()],
};
