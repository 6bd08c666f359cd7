import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { chatCompletionRequestSchema, messageSchemaByRole } from "../wire/request.js";

/** Documentation only: requests are validated by the route with the same zod schemas. */
function chatRequestDocument() {
  return z.toJSONSchema(chatCompletionRequestSchema.extend({ messages: z.array(z.union(Object.values(messageSchemaByRole))).min(1) }), {
    io: "input",
    target: "openapi-3.0",
    unrepresentable: "any",
  });
}

function redocPage(specUrl: string): string {
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>chat-serve API</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><redoc spec-url="${specUrl}"></redoc>
<script src="https://cdn.redoc.ly/redoc/latest/bundles/redoc.standalone.js"></script></body></html>`;
}

/**
 * `{prefix}/docs`, `{prefix}/redoc` and `{prefix}/openapi.json`, describing the mounted app
 * only: the plugins are registered inside its encapsulated context.
 */
export async function registerDocs(app: FastifyInstance, prefix: string): Promise<void> {
  const requestBody = chatRequestDocument();
  await app.register(swagger, {
    openapi: {
      info: { title: "chat-serve", description: "LangGraph graphs served as chat-completions models", version: "1" },
      servers: [{ url: prefix === "" ? "/" : prefix }],
    },
    transform: ({ schema, url, route }) => {
      const local = url.startsWith(prefix) ? url.slice(prefix.length) || "/" : url;
      if (local === "/models/*") {
        // The route is a wildcard (see routes/models.ts); documented as the one parameter it is.
        const params = { type: "object", properties: { model: { type: "string" } }, required: ["model"] };
        return { schema: { ...schema, params }, url: "/models/:model" };
      }
      return {
        schema: route.method === "POST" && local === "/chat/completions" ? { ...schema, body: requestBody } : schema,
        url: local,
      };
    },
  });
  // indexPrefix: the page at {prefix}/docs (no trailing slash) links its assets with the mount prefix.
  await app.register(swaggerUi, { routePrefix: "/docs", indexPrefix: prefix });
  app.get("/openapi.json", { schema: { hide: true } }, async () => app.swagger());
  app.get("/redoc", { schema: { hide: true } }, async (_request, reply) =>
    reply.type("text/html; charset=utf-8").send(redocPage(`${prefix}/openapi.json`)),
  );
}
