import { createHash } from "node:crypto";

/** The tool that answers a paused run, for MCP clients without elicitation. */
export const RESUME_TOOL = "resume";

/** MCP's limit on a tool name's length. */
const TOOL_NAME_MAX = 128;

/** A model's MCP tool name before it must be told apart: its ID with every character outside `[A-Za-z0-9_-]` replaced by `_`. */
function plainToolName(model: string): string {
  return model.replace(/[^A-Za-z0-9_-]/gu, "_");
}

/** The plain name cut to fit, then `_` and 8 hex digits of the ID's SHA-256: unique to the ID, 128 characters at most. */
function hashedToolName(model: string): string {
  const hash = createHash("sha256").update(model).digest("hex").slice(0, 8);
  return `${plainToolName(model).slice(0, TOOL_NAME_MAX - hash.length - 1)}_${hash}`;
}

/**
 * The MCP tool name of every model, by tool name. Every valid model ID gets one: the plain name
 * (docs/mcp.md), unless it is longer than MCP allows, is `resume`, or an earlier model of the
 * config already has it; then the hashed name.
 */
export function mcpToolNames(models: readonly string[]): Map<string, string> {
  const byName = new Map<string, string>();
  for (const model of models) {
    const plain = plainToolName(model);
    const fits = plain.length <= TOOL_NAME_MAX && plain !== RESUME_TOOL && !byName.has(plain);
    byName.set(fits ? plain : hashedToolName(model), model);
  }
  return byName;
}
