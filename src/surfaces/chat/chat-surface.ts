import { registerLazyPost } from "../../http/lazy-routes.js";
import type { Surface } from "../../http/surface.js";

/**
 * OpenAI chat completions: `POST /chat/completions`, in the mount's profile (strict, or
 * chat-ui). The run engine loads with the first request (or once the server has answered its
 * first, see `Surface.warm`), not with the server.
 */
export function chatSurface(): Surface {
  return {
    name: "chat",
    register: (app, context) =>
      registerLazyPost(
        app,
        "/chat/completions",
        { bodyLimit: context.bodyLimit, summary: "Run a graph as a chat completion", tag: "chat" },
        async () => {
          const { answerChatCompletion } = await import("./chat-completions-route.js");
          return (request, reply) => answerChatCompletion(request, reply, context);
        },
      ),
    methods: { "/chat/completions": ["POST"] },
    apiLabels: { "/chat/completions": "chat.completions" },
    runPaths: ["/chat/completions"],
    warm: async () => {
      await import("./chat-completions-route.js");
    },
  };
}
