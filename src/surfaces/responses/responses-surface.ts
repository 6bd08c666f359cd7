import type { Surface } from "../../http/surface.js";
import { registerConversationRoutes } from "./conversations-routes.js";
import { registerResponsesRoute } from "./responses-route.js";

/** The Responses API: `POST /responses`, stored responses (get, delete, input items, cancel) and the Conversations API. */
export function responsesSurface(): Surface {
  return {
    name: "responses",
    register: (app, context) => {
      registerResponsesRoute(app, context);
      registerConversationRoutes(app, context);
    },
    methods: {
      "/responses": ["POST"],
      "/responses/input_tokens": ["POST"],
      "/responses/:id": ["GET", "DELETE"],
      "/responses/:id/input_items": ["GET"],
      "/responses/:id/cancel": ["POST"],
      "/conversations": ["POST"],
      "/conversations/:id": ["GET", "POST", "DELETE"],
      "/conversations/:id/items": ["GET", "POST"],
      "/conversations/:id/items/:item_id": ["GET", "DELETE"],
    },
    apiLabels: { "/responses": "responses", "/responses/input_tokens": "responses" },
    runPaths: ["/responses"],
  };
}
