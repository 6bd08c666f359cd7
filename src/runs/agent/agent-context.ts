import { AgentInvalidBodyError } from "../../errors/catalogue.js";
import type { GraphConfig } from "../../registry/graph-config.js";
import { issuePath } from "../../util/describe-issue.js";

/**
 * A run's `context` for a model with client settings, as the settings schema reads it: the
 * defaults (and a preset's settings) with what the client sent over them, validated strictly.
 * LangGraph's clients send no `context` (agent-chat-ui, CopilotKit): the model then runs on
 * its defaults, where the graph once saw none ("Searching undefined sources"), or failed on a
 * strict schema meeting the run's `configurable`. A wrong value is a 422 naming its field,
 * before the run starts. A model with a context factory, or without settings, gets the
 * context as it was sent.
 */
export function agentContext(config: Pick<GraphConfig, "clientSettings" | "contextFactory" | "presetSettings">, sent: unknown): unknown {
  const settings = config.clientSettings;
  if (settings === undefined || config.contextFactory !== undefined) return sent;
  if (sent != null && (typeof sent !== "object" || Array.isArray(sent))) {
    throw new AgentInvalidBodyError('The context is not valid: send the model\'s settings as one object, e.g. {"depth": 3}.');
  }
  const merged = { ...settings.defaults(), ...config.presetSettings, ...(sent as Record<string, unknown> | null | undefined) };
  const parsed = settings.schema.safeParse(merged);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue === undefined ? "" : issuePath(["context", ...issue.path]);
    throw new AgentInvalidBodyError(`The context is not valid at ${path}: ${issue?.message ?? "unexpected value"}.`);
  }
  return Object.freeze(parsed.data);
}
