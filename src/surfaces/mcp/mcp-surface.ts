import { mcpToolNames } from "../../dialects/mcp/tool-names.js";
import type { Surface, SurfaceSwitch } from "../../http/surface.js";
import type { McpHandler, McpSettings } from "./mcp-route.js";

/** The MCP endpoint's settings as a bind gives them (see `BindOptions.mcp`). */
export type McpBindSettings = Partial<McpSettings>;

/**
 * The MCP endpoint `start` serves: `server.mcp` when the config sets it, else on where only
 * this machine can reach the server. Sessions are shared by every process of a deployment that
 * shares its runs (Redis); otherwise they stay in the process that opened them, so a worker of
 * `--workers` (whose requests any worker may take) keeps none.
 */
function mcpSettingsFromConfig(
  setting: boolean | { sessions?: boolean; maxSessions?: number; maxSessionsPerTenant?: number } | undefined,
  place: { loopback: boolean; isWorker: boolean; shared: boolean },
): McpBindSettings | false {
  const on = setting === undefined ? place.loopback : setting !== false;
  if (!on) return false;
  const sessions = place.isWorker && !place.shared ? false : typeof setting === "object" ? (setting.sessions ?? true) : true;
  const caps = typeof setting === "object" ? { maxSessions: setting.maxSessions, maxSessionsPerTenant: setting.maxSessionsPerTenant } : {};
  return { sessions, loopbackOnly: place.loopback, ...Object.fromEntries(Object.entries(caps).filter(([, value]) => value !== undefined)) };
}

/** Every model as an MCP tool at `/mcp` (Streamable HTTP), each with its tool name (docs/mcp.md). */
function mcpSurface(setting: true | McpBindSettings, models: readonly string[]): Surface {
  const settings: McpSettings = { sessions: true, loopbackOnly: false, ...(setting === true ? {} : setting) };
  const tools = mcpToolNames(models);
  // The route's module (its sessions, its tool definitions) loads with the first request, or
  // once the server has answered its first; the MCP SDK itself with the first MCP request.
  let load: (() => Promise<McpHandler>) | undefined;
  return {
    name: "mcp",
    register: async (app, context) => {
      let handler: Promise<McpHandler> | undefined;
      let closed = false;
      const loadHandler = () =>
        (handler ??= import("./mcp-route.js").then((module) => {
          const loaded = module.mcpHandler({ ...context, mcp: settings, tools });
          // Loaded by warm() after the server began to close: its sessions' sweep ends at once.
          if (closed) void loaded.close();
          return loaded;
        }));
      load = loadHandler;
      // Before the server stops listening: a session's GET stream would hold it open.
      if (settings.sessions) {
        app.addHook("preClose", async () => {
          closed = true;
          // A module that failed to load opened no sessions.
          const loaded = await handler?.catch(() => undefined);
          await loaded?.close();
        });
      }
      await app.register(async (mcp) => {
        // The body is read here, so malformed JSON gets JSON-RPC's parse error, and any content
        // type reaches the transport, which answers what it does not take.
        mcp.removeAllContentTypeParsers();
        mcp.addContentTypeParser("*", { parseAs: "string" }, (_request, body, done) => done(null, body));
        mcp.route({
          method: ["GET", "POST", "DELETE"],
          url: "/mcp",
          bodyLimit: context.bodyLimit,
          schema: { summary: "The models as MCP tools (Streamable HTTP)", tags: ["mcp"] },
          handler: async (request, reply) => (await loadHandler()).handle(request, reply),
        });
      });
    },
    warm: async () => {
      await load?.();
    },
    methods: { "/mcp": ["GET", "POST", "DELETE"] },
    apiLabels: { "/mcp": "mcp" },
    pointers: [
      { label: "mcp", path: "/mcp", sentence: "MCP clients connect to {url}.", item: "MCP server (Streamable HTTP): <code>{url}</code>" },
    ],
    bannerRows: (base) => [
      [
        "mcp",
        `${base}/mcp  (Streamable HTTP${settings.sessions === false ? "; no sessions, so no elicitation: paused runs answer through the resume tool" : ""})`,
      ],
    ],
  };
}

/** `server.mcp` / `bind({ mcp })`: see `mcpSettingsFromConfig`; off for `bind()` unless asked. */
export const mcpSwitch: SurfaceSwitch<"mcp", McpBindSettings> = {
  key: "mcp",
  fromConfig: (value, place) => mcpSettingsFromConfig(value as Parameters<typeof mcpSettingsFromConfig>[0], place),
  bindDefault: () => false,
  surfaces: (setting, { models }) => [mcpSurface(setting, models)],
};
