import type { FastifyInstance, HTTPMethods } from "fastify";
import type { ServeError } from "../errors/serve-error.js";
import type { EnvSettings } from "./env.js";
import type { ChatServePluginOptions } from "./plugin.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /** The `api` label of the route's metrics, from the surface that declared it. */
    api?: string;
  }
}

/** What the shared server hands every surface it mounts: the registry, the policies, the run tracker. */
export type SurfaceContext = Omit<ChatServePluginOptions, "onInstance">;

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
  /** A page's link to it (the playground's navigation), when it has one: the link's text. */
  nav?: string;
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

/** Where a process serves from: what a surface's switch may depend on. */
export interface SwitchPlace {
  /** The server listens where only this machine can reach it (`127.0.0.1`, `localhost`, `::1`). */
  loopback: boolean;
  /** A worker of `--workers`, whose requests any worker may take: nothing of its own may outlive a request. */
  isWorker: boolean;
  /**
   * Every process of the deployment shares runs and their events: a shared queue on Redis, the
   * store and the checkpointer in Postgres. What a worker of `--workers` serves then outlives
   * a request on any of them.
   */
  shared: boolean;
  /** The environment's settings (`SVC_CHAT_API_DOCS_ENABLED`…). */
  env: EnvSettings;
}

/** What every switch's surfaces are given besides their own setting. */
export interface SwitchContext {
  /** The models served. */
  models: readonly string[];
  /** chat-serve's version, for discovery documents. */
  version: string;
  /** Background runs are served in this process. */
  background: boolean;
  /** Each graph's generative UI, bundled at start (langgraph.json's `ui`), for the surface that serves it. */
  uiBundles?: UiBundles;
}

/** One built file of a graph's generative UI: its name in the URL, its bytes. */
export interface UiFile {
  basename: string;
  contents: Uint8Array;
}

/** Each graph's generative UI, bundled: graph id → its files. */
export type UiBundles = ReadonlyMap<string, readonly UiFile[]>;

/**
 * A surface's own on/off setting, declared in its folder: its config key (`server.<key>`, the
 * `bind()` option of the same name), what `chat-serve start` serves when the config gives a
 * value or none, what `bind()` serves when given none, and the surfaces a setting mounts. The
 * list of surfaces (app/surfaces.ts) and the config schema are the only shared places that
 * name one; `start`, the banner and `bind()` go through the list.
 */
export interface SurfaceSwitch<Key extends string = string, Setting = unknown> {
  readonly key: Key;
  /** The setting `start` serves for the config's value (`undefined` when the config has none); `false` is off. */
  fromConfig(value: unknown, place: SwitchPlace): Setting | false;
  /** The setting `bind()` serves when given none; `false` is off. */
  bindDefault(env: EnvSettings): Setting | false;
  /** The surfaces a setting mounts (`true` from `bind({ key: true })`: the defaults). */
  surfaces(setting: Setting | true, context: SwitchContext): Surface[];
  /**
   * A surface with its own error shape served on a prefix of its own (the Agent Protocol at
   * the server root): that prefix, checked. Absent: it is mounted under the API's prefix.
   */
  ownPrefix?(setting: Setting | true): string;
  /** The banner's row for it when `start` leaves it off here, if it says something. */
  offNote?(place: SwitchPlace): string | undefined;
}
