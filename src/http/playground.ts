import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance, FastifyReply } from "fastify";
import { escapeHtml } from "../util/escape-html.js";

/** The playground's files, shipped in the package: no build step, no CDN. */
const PLAYGROUND_DIR = fileURLToPath(new URL("../../playground/", import.meta.url));

/**
 * The page may load nothing from another origin and run no inline script: everything it
 * needs is served here, and it talks to this API only.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
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
export async function registerPlayground(app: FastifyInstance, options: { prefix: string; docs: boolean }): Promise<void> {
  const prefix = escapeHtml(options.prefix);
  const page = (await readFile(`${PLAYGROUND_DIR}index.html`, "utf8"))
    .replaceAll("{{docs-link}}", options.docs ? `<a href="${prefix}/docs">API docs</a>` : "")
    .replaceAll("{{prefix}}", prefix);
  const sendPage = async (_request: unknown, reply: FastifyReply) =>
    reply
      .type("text/html; charset=utf-8")
      .header("content-security-policy", CONTENT_SECURITY_POLICY)
      .header("cache-control", "no-cache")
      .send(page);
  app.get("/playground", { schema: { hide: true } }, sendPage);
  app.get("/playground/", { schema: { hide: true } }, sendPage);
  // In its own context: the docs register @fastify/static too, and each keeps its own.
  await app.register(async (assets) => {
    await assets.register(fastifyStatic, {
      root: PLAYGROUND_DIR,
      prefix: "/playground/assets/",
      decorateReply: false,
      index: false,
      allowedPath: (pathName) => /^\/[\w.-]+\.(?:js|css)$/u.test(pathName),
      cacheControl: true,
      maxAge: 0,
    });
  });
}
