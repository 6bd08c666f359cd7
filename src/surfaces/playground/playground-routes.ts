import { createReadStream } from "node:fs";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { mountOf } from "../../http/self-url.js";
import type { SurfacePointer } from "../../http/surface.js";
import { assertVisible } from "../../http/visibility.js";
import { graphMermaid } from "../../registry/graph-diagram.js";
import type { GraphRegistry } from "../../registry/graph-registry.js";
import { escapeHtml } from "../../util/escape-html.js";

/** The playground's files, shipped in the package: no build step, no CDN. */
const PLAYGROUND_DIR = fileURLToPath(new URL("../../../playground/", import.meta.url));

/**
 * The page may load nothing from another origin and run no inline script: everything it
 * needs is served here, and it talks to this API only.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  // Mermaid's diagrams carry their styles inline (a <style> in the SVG); scripts stay 'self' only.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/**
 * `{prefix}/playground` (with or without a trailing slash): a page to pick a model, fill its
 * client settings and chat with it, served with its assets under `{prefix}/playground/assets/`.
 */
/** Mermaid's self-contained bundle, when the optional `mermaid` package is installed. */
function mermaidBundle(): string | undefined {
  try {
    return createRequire(import.meta.url).resolve("mermaid/dist/mermaid.min.js");
  } catch {
    return undefined;
  }
}

export async function registerPlayground(
  app: FastifyInstance,
  options: { prefix: string; links: readonly SurfacePointer[]; registry: GraphRegistry },
): Promise<void> {
  const template = (await readFile(`${PLAYGROUND_DIR}index.html`, "utf8")).replaceAll(
    "{{links}}",
    options.links.map((link) => `<a href="{{prefix}}${escapeHtml(link.path)}">${escapeHtml(link.nav ?? "")}</a>`).join(""),
  );
  // Its links and API calls go through the host's mount path too (`app.use("/ai", …)`).
  const sendPage = async (request: FastifyRequest, reply: FastifyReply) =>
    reply
      .type("text/html; charset=utf-8")
      .header("content-security-policy", CONTENT_SECURITY_POLICY)
      .header("cache-control", "no-cache")
      .send(template.replaceAll("{{prefix}}", escapeHtml(`${mountOf(request)}${options.prefix}`)));
  const bundle = mermaidBundle();
  app.get("/playground", { schema: { hide: true } }, sendPage);
  app.get("/playground/", { schema: { hide: true } }, sendPage);
  // A model's graph as LangGraph draws it, for the page's diagram: behind the key, as the models are.
  app.get<{ Params: { model: string } }>("/playground/graph/:model", { schema: { hide: true } }, async (request) => {
    const { model } = request.params;
    assertVisible(options.registry, request.chatServeCaller, model);
    const mermaid = await graphMermaid(await options.registry.resolveGraph(model));
    return {
      model,
      mermaid: mermaid ?? null,
      renderer: bundle === undefined ? null : `${mountOf(request)}${options.prefix}/playground/mermaid.min.js`,
    };
  });
  // The diagram's renderer, from the optional `mermaid` package: served here, never from a CDN.
  if (bundle !== undefined) {
    app.get("/playground/mermaid.min.js", { schema: { hide: true } }, async (_request, reply) =>
      reply.type("text/javascript; charset=utf-8").header("cache-control", "public, max-age=3600").send(createReadStream(bundle)),
    );
  }
  // The page's scripts and stylesheet, by name: nothing else in the folder is served. The file
  // server (`@fastify/send`: types, ETag, ranges, 304s) loads on the first asset asked for.
  let send: Promise<{ default: typeof import("@fastify/send") }> | undefined;
  app.get<{ Params: { "*": string } }>("/playground/assets/*", { schema: { hide: true } }, async (request, reply) => {
    const file = request.params["*"];
    if (!/^[\w.-]+\.(?:js|css)$/u.test(file)) return reply.callNotFound();
    send ??= import("@fastify/send");
    const { default: sendFile } = await send;
    const result = await sendFile(request.raw, encodeURIComponent(file), { root: PLAYGROUND_DIR, index: false, maxAge: 0 });
    if (result.type === "directory" || result.statusCode === 404) return reply.callNotFound();
    // A file, a 304 for a cached one, or a refused range.
    return reply.code(result.statusCode).headers(result.headers).send(result.stream);
  });
}
