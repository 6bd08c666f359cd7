import type { HTTPMethods, RouteShorthandOptions } from "fastify";
import { UpgradeRequiredError } from "../../errors/catalogue.js";
import { RouteTable, registerLazyRoutes } from "../../http/lazy-routes.js";
import type { Surface } from "../../http/surface.js";
import { acceptUpgrades, isUpgrade } from "../../http/websocket-upgrade.js";

/** The HTTP routes, whose handlers load with the run engine; `GET /responses` (the socket) is registered on its own. */
const ROUTES: Record<string, readonly HTTPMethods[]> = {
  "/responses": ["POST"],
  "/responses/input_tokens": ["POST"],
  "/responses/compact": ["POST"],
  "/responses/:id": ["GET", "DELETE"],
  "/responses/:id/input_items": ["GET"],
  "/responses/:id/cancel": ["POST"],
  "/conversations": ["POST"],
  "/conversations/:id": ["GET", "POST", "DELETE"],
  "/conversations/:id/items": ["GET", "POST"],
  "/conversations/:id/items/:item_id": ["GET", "DELETE"],
};

/** Each route's summary in the docs, and whether it reads a body (the mount's body limit). */
const SUMMARIES: Record<string, [summary: string, body?: "body"]> = {
  "POST /responses": ["Run a graph as a response (the Responses API)", "body"],
  "POST /responses/input_tokens": ["Count a response request's input tokens without running it", "body"],
  "POST /responses/compact": ["Compact a conversation's input (Open Responses)", "body"],
  "GET /responses/:id": ["Retrieve a stored response, or stream a background one again"],
  "DELETE /responses/:id": ["Delete a stored response"],
  "GET /responses/:id/input_items": ["List a stored response's input items"],
  "POST /responses/:id/cancel": ["Cancel a background response"],
  "POST /conversations": ["Create a conversation", "body"],
  "GET /conversations/:id": ["Retrieve a conversation"],
  "POST /conversations/:id": ["Update a conversation's metadata", "body"],
  "DELETE /conversations/:id": ["Delete a conversation and its items"],
  "GET /conversations/:id/items": ["List a conversation's items"],
  "POST /conversations/:id/items": ["Add items to a conversation", "body"],
  "GET /conversations/:id/items/:item_id": ["Retrieve a conversation item"],
  "DELETE /conversations/:id/items/:item_id": ["Delete a conversation item"],
};

/**
 * The Responses API: `POST /responses` (and its WebSocket mode, `GET /responses` upgraded),
 * stored responses (get, delete, input items, cancel) and the Conversations API. The run
 * engine loads with the first request to any of them (or once the server has answered its
 * first, see `Surface.warm`).
 */
export function responsesSurface(): Surface {
  return {
    name: "responses",
    register: (app, context) => {
      const options: Record<string, Pick<RouteShorthandOptions, "bodyLimit" | "schema">> = {};
      for (const [key, [summary, body]] of Object.entries(SUMMARIES)) {
        const tags = [key.includes("/conversations") ? "conversations" : "responses"];
        options[key] = { schema: { summary, tags }, ...(body === undefined ? {} : { bodyLimit: context.bodyLimit }) };
      }
      registerLazyRoutes(
        app,
        ROUTES,
        async () => {
          const { addResponsesRoutes } = await import("./responses-route.js");
          const { addConversationRoutes } = await import("./conversations-routes.js");
          const table = new RouteTable();
          addResponsesRoutes(table, context);
          addConversationRoutes(table, context);
          return table;
        },
        options,
      );
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
    methods: { ...ROUTES, "/responses": ["GET", "POST"] },
    apiLabels: { "/responses": "responses", "/responses/input_tokens": "responses", "/responses/compact": "responses" },
    runPaths: ["/responses"],
    warm: async () => {
      await Promise.all([import("./responses-route.js"), import("./conversations-routes.js")]);
    },
  };
}
