import { RouteTable, registerLazyRoutes } from "../../http/lazy-routes.js";
import type { Surface } from "../../http/surface.js";

/**
 * OpenAI chat completions: `POST /chat/completions`, in the mount's profile (strict, or
 * chat-ui). The run engine loads with the first request (or once the server has answered its
 * first, see `Surface.warm`), not with the server.
 */
export function chatSurface(): Surface {
  const methods = { "/chat/completions": ["POST"] } as const;
  return {
    name: "chat",
    register: (app, context) => {
      registerLazyRoutes(
        app,
        methods,
        async () => {
          const { answerChatCompletion } = await import("./chat-completions-route.js");
          const table = new RouteTable();
          table.post("/chat/completions", (request, reply) => answerChatCompletion(request, reply, context));
          return table;
        },
        {
          "POST /chat/completions": {
            bodyLimit: context.bodyLimit,
            schema: { summary: "Run a graph as a chat completion", tags: ["chat"] },
          },
        },
      );
    },
    methods,
    apiLabels: { "/chat/completions": "chat.completions" },
    runPaths: ["/chat/completions"],
    warm: async () => {
      await import("./chat-completions-route.js");
    },
  };
}
