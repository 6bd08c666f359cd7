import type { FastifyInstance } from "fastify";
import { normalizePrefix } from "../http/env.js";
import { type ChatServePluginOptions, chatServePlugin } from "../http/plugin.js";
import type { Surface } from "../http/surface.js";
import { a2aSurface } from "../surfaces/a2a/a2a-surface.js";
import { agUiSurface } from "../surfaces/ag-ui/ag-ui-surface.js";
import { aiSdkSurface } from "../surfaces/ai-sdk/ai-sdk-surface.js";
import { anthropicSurface } from "../surfaces/anthropic/anthropic-surface.js";
import { chatSurface } from "../surfaces/chat/chat-surface.js";
import { docsSurface } from "../surfaces/docs/docs-surface.js";
import { type LangGraphBindSettings, langgraphSurface } from "../surfaces/langgraph/langgraph-surface.js";
import { type McpBindSettings, mcpSurface } from "../surfaces/mcp/mcp-surface.js";
import { modelsSurface } from "../surfaces/models/models-surface.js";
import { playgroundSurface } from "../surfaces/playground/playground-surface.js";
import { responsesSurface } from "../surfaces/responses/responses-surface.js";
import type { BindOptions } from "./bind-options.js";

// The list of surfaces: the one place that names them all. Adding a surface is its folder, a
// line here, and (for a config key of its own) the config schema.

/** Which surfaces a mount serves, as `bind()` and the CLI ask for them. */
export interface SurfaceSelection {
  docs: boolean;
  playground: boolean;
  mcp?: boolean | McpBindSettings;
  a2a?: boolean;
  /** The AI SDK's UI message stream for `useChat`, at `/ai-sdk/{model}`. */
  aiSdk?: boolean;
  /** AG-UI 1.0 for `HttpAgent` and CopilotKit, at `/ag-ui/{model}`. */
  agUi?: boolean;
  /** The Anthropic Messages API at `/messages` (its errors in Anthropic's shape). */
  anthropic?: boolean;
  /** The models served (MCP names a tool for each). */
  models: readonly string[];
  /** Background runs are served here (A2A tasks are background runs). */
  background: boolean;
  /** The version A2A cards give. */
  version: string;
}

/** The surfaces of the API mount, in the order they are registered: the docs first, since they document what follows. */
export function apiSurfaces(selection: SurfaceSelection): Surface[] {
  const { mcp } = selection;
  return [
    ...(selection.docs ? [docsSurface()] : []),
    ...(selection.playground ? [playgroundSurface({ docs: selection.docs })] : []),
    modelsSurface(),
    chatSurface(),
    responsesSurface(),
    ...(mcp === undefined || mcp === false ? [] : [mcpSurface(mcp, selection.models)]),
    ...(selection.a2a === true ? [a2aSurface({ version: selection.version, available: selection.background })] : []),
    ...(selection.aiSdk === true ? [aiSdkSurface()] : []),
    ...(selection.agUi === true ? [agUiSurface()] : []),
    ...(selection.anthropic === true ? [anthropicSurface()] : []),
  ];
}

/** The surfaces of the chat-ui profile's mount: the same models and runs, without the pages and the agent protocols. */
function chatUiSurfaces(): Surface[] {
  return [modelsSurface(), chatSurface(), responsesSurface()];
}

/**
 * The LangGraph Agent Protocol, mounted on its own under its prefix (the server root by
 * default): its errors have their own shape. Undefined when it is off.
 */
function langgraphMount(
  setting: boolean | LangGraphBindSettings | undefined,
  version: string,
): { prefix: string; surface: Surface } | undefined {
  if (setting === undefined || setting === false) return undefined;
  const settings = setting === true ? {} : setting;
  const prefix = settings.prefix === undefined || settings.prefix === "" ? "" : normalizePrefix(settings.prefix, "server.langgraph.prefix");
  return { prefix, surface: langgraphSurface({ ...settings, prefix, version }) };
}

/**
 * The mounts beside the API's, each with its own fastify scope: the LangGraph Agent Protocol
 * (its own prefix and error shape) and the chat-ui profile (a second prefix). Returns the
 * surfaces they serve.
 */
export async function registerSideMounts(
  app: FastifyInstance,
  api: ChatServePluginOptions,
  options: BindOptions,
  version: string,
): Promise<Surface[]> {
  const { prefix } = api;
  const added: Surface[] = [];
  const side = { probes: false, onInstance: () => {} };
  const agent = langgraphMount(options.langgraph, version);
  if (agent !== undefined) {
    if (agent.prefix === prefix)
      throw new TypeError(`server.langgraph.prefix must differ from the API prefix ${prefix === "" ? '""' : prefix}`);
    added.push(agent.surface);
    // Its own mount: its own error shape; the probes and the not-found page stay the API's.
    await app.register(chatServePlugin, { ...api, ...side, prefix: agent.prefix, surfaces: [agent.surface] });
  }
  const chatUi = options.profiles?.["chat-ui"];
  if (chatUi !== undefined) {
    const uiPrefix = normalizePrefix(chatUi.prefix, "profiles.chat-ui.prefix");
    if (uiPrefix === prefix) throw new TypeError(`profiles.chat-ui.prefix must differ from the API prefix ${prefix}`);
    // The same models and the same counters, without the pages (the probes are the chat-ui prefix's own).
    await app.register(chatServePlugin, {
      ...api,
      prefix: uiPrefix,
      surfaces: chatUiSurfaces(),
      profile: "chat-ui",
      answerTasks: chatUi.answerTasks ?? true,
      onInstance: () => {},
    });
  }
  return added;
}
