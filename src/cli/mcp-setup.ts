import type { McpBindSettings } from "../http/chat-serve.js";

/**
 * The MCP endpoint `start` serves: `server.mcp` when the config sets it, else on where only
 * this machine can reach the server. Sessions stay in the process that opened them, so a
 * worker of `--workers` (whose requests any worker may take) keeps none.
 */
export function mcpSettings(
  setting: boolean | { sessions?: boolean } | undefined,
  loopback: boolean,
  isWorker: boolean,
): McpBindSettings | undefined {
  const on = setting === undefined ? loopback : setting !== false;
  if (!on) return undefined;
  const sessions = isWorker ? false : typeof setting === "object" ? (setting.sessions ?? true) : true;
  return { sessions, loopbackOnly: loopback };
}

/** The banner's line for the MCP endpoint. */
export function mcpBannerLine(base: string, mcp: McpBindSettings | undefined): string | undefined {
  if (mcp === undefined) return undefined;
  return `${base}/mcp  (Streamable HTTP${mcp.sessions === false ? "; no sessions, so no elicitation: paused runs answer through the resume tool" : ""})`;
}
