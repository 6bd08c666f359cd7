import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { chatCompletionRequestSchema, messageSchemaByRole } from "../wire/request.js";
import { createResponseSchema } from "../wire/responses-request.js";

/**
 * The models as an enum with the first as the example, so "Try it out" sends a real model,
 * never `"model": "string"`.
 */
function withModels(document: Record<string, unknown>, models: readonly string[], example: Record<string, unknown>) {
  const properties = document.properties as Record<string, Record<string, unknown>>;
  properties.model = { ...properties.model, enum: [...models], example: models[0] };
  return { ...document, example };
}

/** Documentation only: requests are validated by the routes with the same zod schemas. */
function chatRequestDocument(models: readonly string[]) {
  const document = z.toJSONSchema(
    chatCompletionRequestSchema.extend({ messages: z.array(z.union(Object.values(messageSchemaByRole))).min(1) }),
    { io: "input", target: "openapi-3.0", unrepresentable: "any" },
  ) as Record<string, unknown>;
  return withModels(document, models, { model: models[0], messages: [{ role: "user", content: "hello there" }] });
}

function responsesRequestDocument(models: readonly string[]) {
  const document = z.toJSONSchema(createResponseSchema, { io: "input", target: "openapi-3.0", unrepresentable: "any" }) as Record<
    string,
    unknown
  >;
  return withModels(document, models, { model: models[0], input: "hello there" });
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
export async function registerDocs(app: FastifyInstance, prefix: string, models: readonly string[]): Promise<void> {
  const chatBody = chatRequestDocument(models);
  const responsesBody = responsesRequestDocument(models);
  await app.register(swagger, {
    openapi: {
      info: { title: "chat-serve", description: "LangGraph graphs served as OpenAI-compatible models", version: "1" },
      servers: [{ url: prefix === "" ? "/" : prefix }],
    },
    transform: ({ schema, url, route }) => {
      const local = url.startsWith(prefix) ? url.slice(prefix.length) || "/" : url;
      if (local === "/models/*") {
        // The route is a wildcard (see routes/models.ts); documented as the one parameter it is.
        const params = { type: "object", properties: { model: { type: "string" } }, required: ["model"] };
        return { schema: { ...schema, params }, url: "/models/:model" };
      }
      const body =
        route.method !== "POST" ? undefined : local === "/chat/completions" ? chatBody : local === "/responses" ? responsesBody : undefined;
      return { schema: body === undefined ? schema : { ...schema, body }, url: local };
    },
  });
  // indexPrefix: the page at {prefix}/docs (no trailing slash) links its assets with the mount prefix.
  await app.register(swaggerUi, { routePrefix: "/docs", indexPrefix: prefix });
  app.get("/openapi.json", { schema: { hide: true } }, async () => app.swagger());
  app.get("/redoc", { schema: { hide: true } }, async (_request, reply) =>
    reply.type("text/html; charset=utf-8").send(redocPage(`${prefix}/openapi.json`)),
  );
}
