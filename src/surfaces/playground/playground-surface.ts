import type { Surface, SurfaceSwitch } from "../../http/surface.js";

/** The playground page at `/playground`, with links to the pages of the mount's other surfaces (the API docs). */
function playgroundSurface(): Surface {
  return {
    name: "playground",
    // The page and its assets load when the playground is on.
    register: async (app, context) =>
      (await import("./playground-routes.js")).registerPlayground(app, {
        prefix: context.prefix,
        links: context.surfaces.flatMap((surface) => (surface.pointers ?? []).filter((pointer) => pointer.nav !== undefined)),
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

/** `server.playground` / `bind({ playground })`: on for `start` where only this machine can reach the server. */
export const playgroundSwitch: SurfaceSwitch<"playground", true> = {
  key: "playground",
  fromConfig: (value, { loopback }) => (value === undefined ? loopback : value === true),
  bindDefault: () => false,
  surfaces: () => [playgroundSurface()],
  offNote: ({ loopback }) => (loopback ? undefined : "off on a network address (server.playground: true turns it on)"),
};
