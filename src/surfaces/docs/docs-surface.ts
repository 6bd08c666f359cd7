import type { Surface } from "../../http/surface.js";

/** The API docs: `/docs` (Swagger UI), `/redoc` and `/openapi.json`, of every route mounted after them. */
export function docsSurface(): Surface {
  return {
    name: "docs",
    // Mounted first: the OpenAPI document is made of the routes registered after it.
    register: async (app, context) =>
      (await import("./docs-routes.js")).registerDocs(
        app,
        context.prefix,
        context.registry.getGraphNames(),
        context.authenticator !== undefined,
      ),
    publicPaths: ["/openapi.json", "/docs/**", "/redoc/**"],
    pointers: [{ label: "docs", path: "/docs", item: '<a href="{url}">API docs</a>' }],
    bannerRows: (base) => [["docs", `${base}/docs`]],
  };
}
