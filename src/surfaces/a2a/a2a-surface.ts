import type { Surface, SurfaceSwitch } from "../../http/surface.js";

/**
 * Every model as an A2A agent under `/a2a`: the list of cards, each agent's card and its
 * JSON-RPC endpoint. Tasks are background responses: without background runs (`available`
 * false) nothing is mounted, and the banner says why.
 */
function a2aSurface(options: { version: string; available: boolean }): Surface {
  if (!options.available) {
    return {
      name: "a2a",
      register: () => {},
      bannerRows: () => [["a2a", "not available: A2A tasks are background runs, which need a Redis coordinator here (see docs/a2a.md)"]],
    };
  }
  return {
    name: "a2a",
    register: async (app, context) => {
      if (context.background === undefined) return;
      const { registerA2aRoutes } = await import("./a2a-route.js");
      await registerA2aRoutes(app, {
        ...context,
        background: context.background,
        auth: context.authenticator !== undefined,
        version: options.version,
      });
    },
    methods: { "/a2a": ["GET"], "/a2a/:model": ["POST"], "/a2a/:model/.well-known/agent-card.json": ["GET"] },
    apiLabels: { "/a2a/:model": "a2a" },
    // A client reads a card to learn how to authenticate.
    publicPaths: ["/a2a", "/a2a/:model/.well-known/agent-card.json"],
    pointers: [
      {
        label: "a2a",
        path: "/a2a",
        sentence: "A2A agent cards are listed at {url}.",
        item: 'A2A agents: <a href="{url}">the agent cards</a>',
      },
    ],
    bannerRows: (base) => [["a2a", `${base}/a2a  (agent cards; A2A 1.0 and 0.3 over JSON-RPC)`]],
  };
}

/** `server.a2a` / `bind({ a2a })`: on for `start` where only this machine can reach the server; its tasks need background runs. */
export const a2aSwitch: SurfaceSwitch<"a2a", true> = {
  key: "a2a",
  fromConfig: (value, { loopback }) => (value === undefined ? loopback : value === true),
  bindDefault: () => false,
  surfaces: (_setting, { version, background }) => [a2aSurface({ version, available: background })],
};
