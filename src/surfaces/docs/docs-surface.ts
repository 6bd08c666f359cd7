import type { Surface, SurfaceSwitch } from "../../http/surface.js";

/** The API docs: `/docs` (Swagger UI), `/redoc` and `/openapi.json`, of every route mounted after them. */
function docsSurface(): Surface {
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
    pointers: [{ label: "docs", path: "/docs", item: '<a href="{url}">API docs</a>', nav: "API docs" }],
    bannerRows: (base) => [["docs", `${base}/docs`]],
  };
}

/**
 * `server.docs` / `bind({ docs })`: off unless asked; `SVC_CHAT_API_DOCS_ENABLED`, when set,
 * wins over the config and is `bind()`'s default.
 */
export const docsSwitch: SurfaceSwitch<"docs", true> = {
  key: "docs",
  fromConfig: (value, { env }) => (env.docsEnabled ?? value === true) || false,
  bindDefault: (env) => env.docsEnabled ?? false,
  surfaces: () => [docsSurface()],
};
