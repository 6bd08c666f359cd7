import type { McpBindSettings } from "../http/chat-serve.js";
import type { BackgroundSetup } from "./background-setup.js";

/**
 * The MCP endpoint `start` serves: `server.mcp` when the config sets it, else on where only
 * this machine can reach the server. Sessions stay in the process that opened them, so a
 * worker of `--workers` (whose requests any worker may take) keeps none.
 */
export function mcpSettings(
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

/** The banner's line for the MCP endpoint. */
function mcpBannerLine(base: string, mcp: McpBindSettings): string {
  return `${base}/mcp  (Streamable HTTP${mcp.sessions === false ? "; no sessions, so no elicitation: paused runs answer through the resume tool" : ""})`;
}

/** The banner's rows for the agent protocols served: MCP, and A2A (whose tasks are background runs). */
export function agentRows(base: string, mcp: McpBindSettings | undefined, a2a: boolean, background: BackgroundSetup): [string, string][] {
  const rows: [string, string][] = mcp === undefined ? [] : [["mcp", mcpBannerLine(base, mcp)]];
  if (!a2a) return rows;
  if (background.kind === "unavailable") {
    rows.push(["a2a", "not available: A2A tasks are background runs, which need a Redis coordinator here (see docs/a2a.md)"]);
  } else {
    rows.push(["a2a", `${base}/a2a  (agent cards; A2A 1.0 and 0.3 over JSON-RPC)`]);
  }
  return rows;
}
