import type { Surface } from "../../http/surface.js";
import { registerChatRoute } from "./chat-completions-route.js";

/** OpenAI chat completions: `POST /chat/completions`, in the mount's profile (strict, or chat-ui). */
export function chatSurface(): Surface {
  return {
    name: "chat",
    register: (app, context) => registerChatRoute(app, context),
    methods: { "/chat/completions": ["POST"] },
    apiLabels: { "/chat/completions": "chat.completions" },
    runPaths: ["/chat/completions"],
  };
}
