import type { HTTPMethods } from "fastify";
import type { ServeError } from "../errors/serve-error.js";

// The methods a wrong-method request may use; OPTIONS is left to CORS preflight handlers.
export const ANSWERED_METHODS: readonly HTTPMethods[] = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];

/** A path's methods (HEAD wherever GET is), as the `Allow` header lists them. */
export function allowedMethods(allowed: readonly HTTPMethods[]): readonly string[] {
  return allowed.includes("GET") && !allowed.includes("HEAD") ? [...allowed, "HEAD"] : allowed;
}

interface Entry {
  readonly allow: readonly string[];
  /** The error shape of the mount that serves the path. */
  readonly render: ((error: ServeError) => unknown) | undefined;
}

type Router = {
  on(method: string, path: string, handler: () => void, store: Entry): void;
  find(method: string, path: string): { store: Entry } | null;
};

/**
 * Which methods each known path answers, for a request no route took: a wrong method on a
 * known path gets 405 with an `Allow` header instead of 404. Consulted only from a not-found
 * handler, so it costs nothing at start: the paths are indexed (with fastify's own router,
 * `find-my-way`) on the first request that reaches it, not as hundreds of 405 routes.
 */
export class MethodIndex {
  readonly #entries: [path: string, entry: Entry][] = [];
  #router: Router | undefined;

  /** Adds a mount's paths (with its prefix) and the error shape it answers in. */
  add(prefix: string, methods: Readonly<Record<string, readonly HTTPMethods[]>>, render?: (error: ServeError) => unknown): void {
    for (const [path, allowed] of Object.entries(methods)) this.#entries.push([prefix + path, { allow: allowedMethods(allowed), render }]);
    this.#router = undefined;
  }

  /**
   * What a request to `url` (query string and all) with `method` hit: the path's methods and
   * error shape when the path is known and the method is not one of them; else undefined.
   */
  async refused(method: string, url: string): Promise<Entry | undefined> {
    if (!ANSWERED_METHODS.includes(method as HTTPMethods) || this.#entries.length === 0) return undefined;
    const router = this.#router ?? (await this.#build());
    const entry = router.find("GET", url.split("?")[0] ?? url)?.store;
    return entry === undefined || entry.allow.includes(method) ? undefined : entry;
  }

  async #build(): Promise<Router> {
    const { default: createRouter } = await import("find-my-way");
    const router = createRouter() as unknown as Router;
    const noop = () => {};
    for (const [path, entry] of this.#entries) router.on("GET", path, noop, entry);
    this.#router = router;
    return router;
  }
}
