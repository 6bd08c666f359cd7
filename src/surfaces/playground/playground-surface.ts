import type { Surface } from "../../http/surface.js";

/** The playground page at `/playground`, with a link to the API docs when they are served too. */
export function playgroundSurface(options: { docs: boolean }): Surface {
  return {
    name: "playground",
    // The page and its assets load when the playground is on.
    register: async (app, context) =>
      (await import("./playground-routes.js")).registerPlayground(app, {
        prefix: context.prefix,
        docs: options.docs,
        registry: context.registry,
      }),
    publicPaths: ["/playground", "/playground/", "/playground/assets/*", "/playground/mermaid.min.js"],
    pointers: [
      {
        label: "playground",
        path: "/playground",
        sentence: "Try the models in a browser at {url}.",
        item: '<a href="{url}">Playground</a>: chat with the models in this browser',
        first: true,
      },
    ],
    bannerRows: (base) => [["playground", `${base}/playground`]],
  };
}
