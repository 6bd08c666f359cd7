import type { FastifyInstance, HTTPMethods } from "fastify";
import type { ServeError } from "../errors/serve-error.js";
import type { ChatServePluginOptions } from "./plugin.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /** The `api` label of the route's metrics, from the surface that declared it. */
    api?: string;
  }
}

/** What the shared server hands every surface it mounts: the registry, the policies, the run tracker. */
export type SurfaceContext = Omit<ChatServePluginOptions, "surfaces" | "onInstance">;

/** Where a surface is, for `GET /` on an app chat-serve created: `{url}` stands for its address. */
export interface SurfacePointer {
  /** The key of the JSON answer (`mcp`, `playground`). */
  label: string;
  /** Its path under the prefix (`/mcp`). */
  path: string;
  /** A sentence of the JSON answer's message, if it has one (`MCP clients connect to {url}.`). */
  sentence?: string;
  /** The page's list item, HTML (`MCP server (Streamable HTTP): <code>{url}</code>`). */
  item: string;
  /** Listed before the API's own line (the playground, for a browser). */
  first?: boolean;
}

/**
 * One way into the run engine (chat completions, Responses, MCP, A2A, the playground…): its
 * routes and what the shared server must know of them, as data. The shared server (the
 * fastify plugin, the host app, metrics, auth, limits, drain) mounts a list of surfaces and
 * knows none of them by name. Paths are relative to the prefix the surface is mounted under.
 */
export interface Surface {
  /** The surface's name, as its config key and folder say (`mcp`, `a2a`, `chat`). */
  readonly name: string;
  /** Registers the routes, in an encapsulated scope of the mounted app. */
  register(app: FastifyInstance, context: SurfaceContext): Promise<void> | void;
  /** The methods each path answers; every other method gets 405 with an `Allow` header. */
  readonly methods?: Readonly<Record<string, readonly HTTPMethods[]>>;
  /** The `api` label of each path's metrics (paths not listed count as `other`). */
  readonly apiLabels?: Readonly<Record<string, string>>;
  /**
   * Paths that need no API key: probes, pages, discovery documents. A path ending in `/**`
   * opens the page and everything under it.
   */
  readonly publicPaths?: readonly string[];
  /** Paths whose POST starts a run: a draining server refuses them with 503. */
  readonly runPaths?: readonly string[];
  /** Where it is, for the root page. */
  readonly pointers?: readonly SurfacePointer[];
  /**
   * The banner's rows for it (`chat-serve start`), given the address and API prefix it listens
   * on (`base`) and the bare address (for a surface mounted under a prefix of its own).
   */
  bannerRows?(base: string, address: string): [label: string, text: string][];
  /**
   * Loads what its routes load on their first request (a surface whose modules load lazily):
   * the shared server calls it once it has answered its first request, so that start-up does
   * not pay for them and the first run rarely does.
   */
  warm?(): Promise<void>;
  /**
   * Its own error shape (the Agent Protocol's `{"detail": …}`, Anthropic's): every error of its
   * routes, 405s on its paths and 404s under them are answered in it, from a scope of its own
   * in a mount shared with others, or as the whole mount's shape when it is alone in it.
   * Default: the OpenAI envelope.
   */
  errorBody?(error: ServeError): unknown;
}
