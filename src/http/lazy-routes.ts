import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods, RouteGenericInterface, RouteShorthandOptions } from "fastify";

/** A route's handler, as a surface writes it. */
// biome-ignore lint/suspicious/noExplicitAny: each handler narrows its own request type.
type AnyHandler = (request: FastifyRequest<any>, reply: FastifyReply) => Promise<unknown>;

/**
 * The handlers of a surface's routes, collected by method and path: what a surface's modules
 * give `registerLazyRoutes` once they are loaded. Written like fastify's shorthands.
 */
export class RouteTable {
  readonly #handlers = new Map<string, AnyHandler>();

  #add(method: HTTPMethods, url: string, handler: AnyHandler): void {
    const key = `${method} ${url}`;
    if (this.#handlers.has(key)) throw new Error(`RouteTable: ${key} has two handlers`);
    this.#handlers.set(key, handler);
  }

  get<T extends RouteGenericInterface = RouteGenericInterface>(
    url: string,
    handler: (request: FastifyRequest<T>, reply: FastifyReply) => Promise<unknown>,
  ): void {
    this.#add("GET", url, handler);
  }

  post<T extends RouteGenericInterface = RouteGenericInterface>(
    url: string,
    handler: (request: FastifyRequest<T>, reply: FastifyReply) => Promise<unknown>,
  ): void {
    this.#add("POST", url, handler);
  }

  put<T extends RouteGenericInterface = RouteGenericInterface>(
    url: string,
    handler: (request: FastifyRequest<T>, reply: FastifyReply) => Promise<unknown>,
  ): void {
    this.#add("PUT", url, handler);
  }

  patch<T extends RouteGenericInterface = RouteGenericInterface>(
    url: string,
    handler: (request: FastifyRequest<T>, reply: FastifyReply) => Promise<unknown>,
  ): void {
    this.#add("PATCH", url, handler);
  }

  delete<T extends RouteGenericInterface = RouteGenericInterface>(
    url: string,
    handler: (request: FastifyRequest<T>, reply: FastifyReply) => Promise<unknown>,
  ): void {
    this.#add("DELETE", url, handler);
  }

  /** The handler of a method and path, if the table has one. */
  handler(method: HTTPMethods, url: string): AnyHandler | undefined {
    return this.#handlers.get(`${method} ${url}`);
  }

  /** Every `METHOD path` the table answers. */
  keys(): IterableIterator<string> {
    return this.#handlers.keys();
  }

  /** The table of the routes `served` lists (a surface with route groups turned off). */
  only(served: Readonly<Record<string, readonly HTTPMethods[]>>): RouteTable {
    const kept = new RouteTable();
    for (const [url, verbs] of Object.entries(served)) {
      for (const method of verbs) {
        const handler = this.handler(method, url);
        if (handler !== undefined) kept.#add(method, url, handler);
      }
    }
    return kept;
  }
}

/**
 * Registers a surface's routes from its table of paths and methods, each answering through the
 * handler `load()` gives: the surface's modules (its engine, its schemas) load on the first
 * request to any of them, so a server that starts with the surface on pays only for its routes.
 * The table and the handlers must name the same routes: the first request that finds them apart
 * fails with that, and so does every test of the surface.
 */
export function registerLazyRoutes(
  app: FastifyInstance,
  methods: Readonly<Record<string, readonly HTTPMethods[]>>,
  load: () => Promise<RouteTable>,
  /** A route's own options (its body limit, its summary for the docs), by `METHOD path`. */
  routeOptions: Readonly<Record<string, Pick<RouteShorthandOptions, "bodyLimit" | "schema">>> = {},
): { loaded(): Promise<RouteTable> | undefined; load(): Promise<RouteTable> } {
  let loading: Promise<RouteTable> | undefined;
  const table = () => {
    loading ??= load().then((routes) => {
      const declared = new Set(Object.entries(methods).flatMap(([url, verbs]) => verbs.map((method) => `${method} ${url}`)));
      const answered = new Set(routes.keys());
      const missing = [...declared].filter((key) => !answered.has(key));
      const undeclared = [...answered].filter((key) => !declared.has(key));
      if (missing.length > 0 || undeclared.length > 0) {
        throw new Error(
          `the route table and the handlers differ: missing ${missing.join(", ") || "none"}; undeclared ${undeclared.join(", ") || "none"}`,
        );
      }
      return routes;
    });
    return loading;
  };
  for (const [url, verbs] of Object.entries(methods)) {
    if (verbs.some((method) => routeOptions[`${method} ${url}`] !== undefined)) {
      // A route with options of its own (a body limit, its summary in the docs) is one route per method.
      for (const method of verbs) {
        // Looked up once: after the first request, a route costs what a route registered directly does.
        // Not an async function: once loaded, a request goes straight to the handler, with no
        // promise of the wrapper's own between them (fastify answers a throw here as an error).
        let handler: AnyHandler | undefined;
        app.route({
          ...routeOptions[`${method} ${url}`],
          method,
          url,
          handler: (request, reply) => {
            if (handler !== undefined) return handler(request, reply);
            return table().then((routes) => {
              handler = routes.handler(method, url) as AnyHandler;
              return handler(request, reply);
            });
          },
        });
      }
      continue;
    }
    // Otherwise one route answers all of the path's methods, HEAD with GET's handler (node sends
    // no body for a HEAD): fewer routes for fastify to make at start than a route per method
    // and fastify's HEAD twin of each GET (the Agent Protocol's 55 are 32).
    const headAsGet = verbs.includes("GET") && !verbs.includes("HEAD");
    const handlers = new Map<string, AnyHandler>();
    app.route({
      method: headAsGet ? [...verbs, "HEAD"] : [...verbs],
      url,
      exposeHeadRoute: false,
      handler: (request, reply) => {
        const method = (headAsGet && request.method === "HEAD" ? "GET" : request.method) as HTTPMethods;
        const handler = handlers.get(method);
        if (handler !== undefined) return handler(request, reply);
        return table().then((routes) => {
          const loaded = routes.handler(method, url) as AnyHandler;
          handlers.set(method, loaded);
          return loaded(request, reply);
        });
      },
    });
  }
  return { loaded: () => loading, load: table };
}

/**
 * A surface's single `POST` route (a run route: chat completions, the AI SDK's, AG-UI's),
 * answered by the handler `load()` gives once its module has loaded: `registerLazyRoutes`
 * for one route, with the mount's body limit and its summary for the docs.
 */
export function registerLazyPost<T extends RouteGenericInterface = RouteGenericInterface>(
  app: FastifyInstance,
  url: string,
  route: { bodyLimit: number; summary: string; tag: string },
  load: () => Promise<(request: FastifyRequest<T>, reply: FastifyReply) => Promise<unknown>>,
): void {
  registerLazyRoutes(
    app,
    { [url]: ["POST"] },
    async () => {
      const table = new RouteTable();
      table.post<T>(url, await load());
      return table;
    },
    { [`POST ${url}`]: { bodyLimit: route.bodyLimit, schema: { summary: route.summary, tags: [route.tag] } } },
  );
}
