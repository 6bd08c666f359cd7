import type { FastifyInstance } from "fastify";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";

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
  await app.register(swagger, {
    openapi: {
      info: { title: "chat-serve", description: "LangGraph graphs served as chat-completions models", version: "1" },
      servers: [{ url: prefix === "" ? "/" : prefix }],
    },
    transform: ({ schema, url }) => ({ schema, url: url.startsWith(prefix) ? url.slice(prefix.length) || "/" : url }),
  });
  await app.register(swaggerUi, { routePrefix: "/docs" });
  app.get("/openapi.json", { schema: { hide: true } }, async () => app.swagger());
  app.get("/redoc", { schema: { hide: true } }, async (_request, reply) =>
    reply.type("text/html; charset=utf-8").send(redocPage(`${prefix}/openapi.json`)),
  );
}
