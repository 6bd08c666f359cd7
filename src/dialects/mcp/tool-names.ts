/** The tool that answers a paused run, for MCP clients without elicitation. */
export const RESUME_TOOL = "resume";

/** MCP's limit on a tool name's length. */
const TOOL_NAME_MAX = 128;

/** A model's MCP tool name: its ID with every character outside `[A-Za-z0-9_-]` replaced by `_`. */
function mcpToolName(model: string): string {
  return model.replace(/[^A-Za-z0-9_-]/gu, "_");
}

/**
 * The tool name of every model, by name. Throws a TypeError naming the models when two of
 * them (or a model and the `resume` tool) would have one name, or a name is too long for MCP.
 */
export function mcpToolNames(models: readonly string[]): Map<string, string> {
  const byName = new Map<string, string>();
  for (const model of models) {
    const name = mcpToolName(model);
    if (name.length > TOOL_NAME_MAX) {
      throw new TypeError(
        `server.mcp: model '${model}' is longer than the ${TOOL_NAME_MAX} characters an MCP tool name may have; shorten its ID`,
      );
    }
    if (name === RESUME_TOOL) {
      throw new TypeError(
        `server.mcp: model '${model}' would be the MCP tool '${RESUME_TOOL}', which answers paused runs; rename the model`,
      );
    }
    const other = byName.get(name);
    if (other !== undefined) {
      throw new TypeError(`server.mcp: models '${other}' and '${model}' would both be the MCP tool '${name}'; rename one of them`);
    }
    byName.set(name, model);
  }
  return byName;
}
