import { mcpToolNames } from "../../dialects/mcp/tool-names.js";
import type { Surface } from "../../http/surface.js";
import type { McpSettings } from "./mcp-route.js";

/** The MCP endpoint's settings as a bind gives them (see `BindOptions.mcp`). */
export type McpBindSettings = Partial<McpSettings>;

/**
 * The MCP endpoint `start` serves: `server.mcp` when the config sets it, else on where only
 * this machine can reach the server. Sessions stay in the process that opened them, so a
 * worker of `--workers` (whose requests any worker may take) keeps none.
 */
export function mcpSettingsFromConfig(
  setting: boolean | { sessions?: boolean; maxSessions?: number; maxSessionsPerTenant?: number } | undefined,
  loopback: boolean,
  isWorker: boolean,
): McpBindSettings | undefined {
  const on = setting === undefined ? loopback : setting !== false;
  if (!on) return undefined;
  const sessions = isWorker ? false : typeof setting === "object" ? (setting.sessions ?? true) : true;
  const caps = typeof setting === "object" ? { maxSessions: setting.maxSessions, maxSessionsPerTenant: setting.maxSessionsPerTenant } : {};
  return { sessions, loopbackOnly: loopback, ...Object.fromEntries(Object.entries(caps).filter(([, value]) => value !== undefined)) };
}

/** Every model as an MCP tool at `/mcp` (Streamable HTTP), each with its tool name (docs/mcp.md). */
export function mcpSurface(setting: true | McpBindSettings, models: readonly string[]): Surface {
  const settings: McpSettings = { sessions: true, loopbackOnly: false, ...(setting === true ? {} : setting) };
  const tools = mcpToolNames(models);
  return {
    name: "mcp",
    register: async (app, context) => (await import("./mcp-route.js")).registerMcpRoute(app, { ...context, mcp: settings, tools }),
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
