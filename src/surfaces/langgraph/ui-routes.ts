import path from "node:path";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { AgentInvalidBodyError, AgentNotFoundError } from "../../errors/catalogue.js";
import { mountOf } from "../../http/self-url.js";
import type { UiBundles } from "../../http/surface.js";

/** The routes of a graph's generative UI, as LangGraph's server names them. */
export const UI_METHODS = { "/ui/:agent": ["POST"], "/ui/:agent/:basename": ["GET"] } as const;

/** The files a `<script>` or `<link>` loads: public, as LangGraph's server serves them (a tag sends no token). */
export const UI_PUBLIC_PATHS = ["/ui/:agent/:basename"];

const componentRequest = z.looseObject({ name: z.string("must be the name of the component to render").min(1) });

const CONTENT_TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json; charset=utf-8",
};

/** Text inside a single-quoted HTML attribute. */
function attribute(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("'", "&#39;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

/** Loopback hosts get `http:`; any other host the page's own scheme (`//host/…`), as LangGraph's server writes them. */
function schemeFor(host: string): string {
  const name = host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : host.split(":")[0]!;
  return name === "localhost" || name === "127.0.0.1" || name === "[::1]" ? "http:" : "";
}

/**
 * `POST /ui/{graph}` answers `LoadExternalComponent` (`@langchain/langgraph-sdk/react-ui`) with
 * the tags that load the graph's bundle into the page's shadow root and render the component
 * named in the body; `GET /ui/{graph}/{file}` serves the bundle's files. `{graph}` is the graph
 * id, the namespace `useStream`'s `assistantId` gives when it names the graph.
 */
export function registerUiRoutes(app: FastifyInstance, bundles: UiBundles): void {
  const known = () => `The graphs with a UI here: ${[...bundles.keys()].join(", ")}.`;
  app.post<{ Params: { agent: string } }>("/ui/:agent", async (request, reply) => {
    const { agent } = request.params;
    const parsed = componentRequest.safeParse(request.body ?? {});
    if (!parsed.success) throw new AgentInvalidBodyError(`name: ${parsed.error.issues[0]!.message}`);
    const files = bundles.get(agent);
    if (files === undefined || files.length === 0) throw new AgentNotFoundError("UI", agent, known());
    const here = `${mountOf(request)}${request.url.split("?")[0]!.replace(/\/+$/u, "")}`;
    const base = `${schemeFor(request.host)}//${request.host}${here}`;
    const tags = files
      .filter((file) => path.extname(file.basename) === ".css")
      .map((file) => `<link rel="stylesheet" href="${base}/${encodeURIComponent(file.basename)}" />`);
    const script = files.find((file) => path.extname(file.basename) === ".js");
    if (script !== undefined) {
      const global = `__LGUI_${agent.replace(/[^a-zA-Z0-9]/gu, "_")}`;
      const render = `${global}.render(${JSON.stringify(parsed.data.name)}, "{{shadowRootId}}")`;
      tags.push(`<script src="${base}/${encodeURIComponent(script.basename)}" onload='${attribute(render)}'></script>`);
    }
    return reply.type("text/html; charset=utf-8").send(tags.join("\n"));
  });
  app.get<{ Params: { agent: string; basename: string } }>("/ui/:agent/:basename", async (request, reply) => {
    const { agent, basename } = request.params;
    const file = bundles.get(agent)?.find((candidate) => candidate.basename === basename);
    if (file === undefined) throw new AgentNotFoundError("UI", `${agent}/${basename}`, known());
    return reply
      .type(CONTENT_TYPES[path.extname(basename)] ?? "application/octet-stream")
      .header("cache-control", "no-cache")
      .send(Buffer.from(file.contents.buffer, file.contents.byteOffset, file.contents.byteLength));
  });
}
