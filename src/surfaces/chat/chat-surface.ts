import type { Surface } from "../../http/surface.js";
import type { ChatRouteOptions } from "./chat-completions-route.js";

/**
 * OpenAI chat completions: `POST /chat/completions`, in the mount's profile (strict, or
 * chat-ui). The run engine loads with the first request (or once the server has answered its
 * first, see `Surface.warm`), not with the server.
 */
export function chatSurface(): Surface {
  const route = () => import("./chat-completions-route.js");
  return {
    name: "chat",
    register: (app, context) => {
      app.post(
        "/chat/completions",
        { bodyLimit: context.bodyLimit, schema: { summary: "Run a graph as a chat completion", tags: ["chat"] } },
        async (request, reply) => (await route()).answerChatCompletion(request, reply, context as ChatRouteOptions),
      );
    },
    methods: { "/chat/completions": ["POST"] },
    apiLabels: { "/chat/completions": "chat.completions" },
    runPaths: ["/chat/completions"],
    warm: async () => {
      await route();
    },
  };
}
