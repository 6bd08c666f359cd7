import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import { mountOf } from "../../http/self-url.js";
import { chatCompletionRequestSchema, messageSchemaByRole } from "../../wire/request.js";
import { createResponseSchema } from "../../wire/responses-request.js";

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

/** Redoc's self-contained bundle, when the optional `redoc` package is installed. */
function redocBundle(): string | undefined {
  try {
    return createRequire(import.meta.url).resolve("redoc/bundles/redoc.standalone.js");
  } catch {
    return undefined;
  }
}

/** The bundle's one remote asset: a logo on Redocly's CDN, served from this server instead. */
const REDOC_REMOTE_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg";

/** A plain mark in its place (a document with a folded corner), so the page asks nothing of another origin. */
const LOCAL_LOGO =
  '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16"><path d="M3 1h7l3 3v11H3z" fill="none" stroke="#6b6b76"/><path d="M10 1v3h3" fill="none" stroke="#6b6b76"/></svg>';

/**
 * The bundle with its remote logo pointed at this server, read and rewritten once, on the
 * first request for it.
 */
function localRedocBundle(file: string, logoUrl: string): () => Promise<string> {
  let source: Promise<string> | undefined;
  return () => {
    source ??= readFile(file, "utf8").then((text) => text.replaceAll(REDOC_REMOTE_LOGO, logoUrl));
    return source;
  };
}

/**
 * Everything from this server, the logo the bundle would fetch from a CDN included. Redoc
 * styles with injected <style> tags and searches in a blob worker.
 */
const REDOC_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "worker-src 'self' blob:",
  "connect-src 'self'",
  "base-uri 'none'",
].join("; ");

function redocPage(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>chat-serve API</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,"></head>
<body><redoc spec-url="openapi.json"></redoc>
<script src="redoc/redoc.standalone.js"></script></body></html>`;
}

function redocMissingPage(prefix: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>chat-serve API</title><link rel="icon" href="data:,"></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; line-height: 1.5">
<h1>Redoc is not installed</h1>
<p>This page needs the optional <code>redoc</code> package: run <code>npm install redoc@2</code> in the project and restart chat-serve.</p>
<p>The same API is described at <a href="docs">${prefix}/docs</a> (Swagger UI) and <a href="openapi.json">${prefix}/openapi.json</a>.</p>
</body></html>`;
}

/**
 * `{prefix}/docs`, `{prefix}/redoc` and `{prefix}/openapi.json`, describing the mounted app
 * only: the plugins are registered inside its encapsulated context.
 */
export async function registerDocs(app: FastifyInstance, prefix: string, models: readonly string[], auth: boolean): Promise<void> {
  const chatBody = chatRequestDocument(models);
  const responsesBody = responsesRequestDocument(models);
  await app.register(swagger, {
    openapi: {
      info: { title: "chat-serve", description: "LangGraph graphs served as OpenAI-compatible models", version: "1" },
      servers: [{ url: prefix === "" ? "/" : prefix }],
      // With API keys, Swagger UI's Authorize button takes one and sends it as a bearer token.
      ...(auth ? { components: { securitySchemes: { apiKey: { type: "http", scheme: "bearer" } } }, security: [{ apiKey: [] }] } : {}),
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
  // The API's address as this request reached it: under the host's mount path too (`app.use("/ai", …)`).
  const served = (request: FastifyRequest) => {
    const spec = app.swagger() as unknown as Record<string, unknown>;
    return { ...spec, servers: [{ url: `${mountOf(request)}${prefix}` || "/" }] };
  };
  // indexPrefix: the page at {prefix}/docs (no trailing slash) links its assets with the prefix;
  // under a host's mount path it is sent to {prefix}/docs/, whose links are relative.
  await app.register(swaggerUi, {
    routePrefix: "/docs",
    indexPrefix: prefix,
    transformSpecification: (_spec, request) => served(request),
    transformSpecificationClone: false,
    uiHooks: {
      onRequest: (request, reply, done) => {
        const mount = mountOf(request);
        const path = request.url.split("?")[0] ?? "";
        if (mount !== "" && path === `${prefix}/docs`) return void reply.redirect(`${mount}${path}/`);
        done();
      },
    },
  });
  app.get("/openapi.json", { schema: { hide: true } }, async (request) => served(request));
  // Redoc from its package, never from a CDN; it is optional (a large install) and says so when missing.
  const bundle = redocBundle();
  app.get("/redoc", { schema: { hide: true } }, async (_request, reply) =>
    bundle === undefined
      ? reply.status(404).type("text/html; charset=utf-8").send(redocMissingPage(prefix))
      : reply.type("text/html; charset=utf-8").header("content-security-policy", REDOC_POLICY).send(redocPage()),
  );
  if (bundle !== undefined) {
    const source = localRedocBundle(bundle, "redoc/logo-mini.svg");
    app.get("/redoc/redoc.standalone.js", { schema: { hide: true } }, async (_request, reply) =>
      reply
        .type("text/javascript; charset=utf-8")
        .header("cache-control", "public, max-age=3600")
        .send(await source()),
    );
    app.get("/redoc/logo-mini.svg", { schema: { hide: true } }, async (_request, reply) =>
      reply.type("image/svg+xml").header("cache-control", "public, max-age=3600").send(LOCAL_LOGO),
    );
  }
}
