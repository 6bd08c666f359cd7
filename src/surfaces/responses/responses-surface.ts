import { UpgradeRequiredError } from "../../errors/catalogue.js";
import type { Surface } from "../../http/surface.js";
import { acceptUpgrades, isUpgrade } from "../../http/websocket-upgrade.js";
import { registerConversationRoutes } from "./conversations-routes.js";
import { registerResponsesRoute } from "./responses-route.js";

/**
 * The Responses API: `POST /responses` (and its WebSocket mode, `GET /responses` upgraded),
 * stored responses (get, delete, input items, cancel) and the Conversations API.
 */
export function responsesSurface(): Surface {
  return {
    name: "responses",
    register: (app, context) => {
      registerResponsesRoute(app, context);
      registerConversationRoutes(app, context);
      // The WebSocket mode: its module (and `ws`) load with the first connection.
      acceptUpgrades(app, ["/responses"]);
      app.get(
        "/responses",
        { schema: { summary: "The Responses WebSocket mode (upgrade)", tags: ["responses"] } },
        async (request, reply) => {
          if (!isUpgrade(request)) {
            throw new UpgradeRequiredError(
              `GET ${app.prefix}/responses is the Responses API's WebSocket mode: connect with a WebSocket client and send response.create messages, or POST ${app.prefix}/responses over HTTP.`,
            );
          }
          const { serveResponsesSocket } = await import("./responses-socket.js");
          await serveResponsesSocket(request, reply, { ...context, idleMs: context.socketIdleMs });
          return reply;
        },
      );
    },
    methods: {
      "/responses": ["GET", "POST"],
      "/responses/input_tokens": ["POST"],
      "/responses/compact": ["POST"],
      "/responses/:id": ["GET", "DELETE"],
      "/responses/:id/input_items": ["GET"],
      "/responses/:id/cancel": ["POST"],
      "/conversations": ["POST"],
      "/conversations/:id": ["GET", "POST", "DELETE"],
      "/conversations/:id/items": ["GET", "POST"],
      "/conversations/:id/items/:item_id": ["GET", "DELETE"],
    },
    apiLabels: { "/responses": "responses", "/responses/input_tokens": "responses", "/responses/compact": "responses" },
    runPaths: ["/responses"],
  };
}
