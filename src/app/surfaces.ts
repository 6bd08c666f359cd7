import type { FastifyInstance } from "fastify";
import { type EnvSettings, normalizePrefix } from "../http/env.js";
import { type ChatServePluginOptions, chatServePlugin } from "../http/plugin.js";
import type { Surface, SurfaceSwitch, SwitchContext, SwitchPlace } from "../http/surface.js";
import { a2aSwitch } from "../surfaces/a2a/a2a-surface.js";
import { agUiSwitch } from "../surfaces/ag-ui/ag-ui-surface.js";
import { aiSdkSwitch } from "../surfaces/ai-sdk/ai-sdk-surface.js";
import { anthropicSwitch } from "../surfaces/anthropic/anthropic-surface.js";
import { chatSurface } from "../surfaces/chat/chat-surface.js";
import { docsSwitch } from "../surfaces/docs/docs-surface.js";
import { langgraphSwitch } from "../surfaces/langgraph/langgraph-surface.js";
import { mcpSwitch } from "../surfaces/mcp/mcp-surface.js";
import { modelsSurface } from "../surfaces/models/models-surface.js";
import { playgroundSwitch } from "../surfaces/playground/playground-surface.js";
import { responsesSurface } from "../surfaces/responses/responses-surface.js";
import type { BindOptions } from "./bind-options.js";

// The list of surfaces: the one place that names them all. Adding a surface is its folder (with
// its switch), a line here, and its config key in the config schema.

/** Mounted before the API's own surfaces: the docs first, since they document what follows. */
const LEADING = [docsSwitch, playgroundSwitch] as const;
/** Mounted after them, under the API's prefix. */
const TRAILING = [mcpSwitch, a2aSwitch, aiSdkSwitch, agUiSwitch, anthropicSwitch] as const;
/** Mounted on a prefix of their own, with their own error shape. */
const OWN = [langgraphSwitch] as const;
const SWITCHES = [...LEADING, ...TRAILING, ...OWN] as const;

type Switch = (typeof SWITCHES)[number];
type SettingOf<S> = S extends SurfaceSwitch<string, infer Setting> ? Setting : never;

/** A `bind()` option for every surface with a switch: `true` (its defaults), `false` (off) or its settings. */
export type SwitchOptions = { [S in Switch as S["key"]]?: boolean | SettingOf<S> };

// The list's switches, seen through their common interface.
type AnySwitch = SurfaceSwitch<string, unknown>;

/** What one switch mounts for a `bind()` option: none when it is off. */
function mounted(gate: AnySwitch, options: SwitchOptions, env: EnvSettings, context: SwitchContext): Surface[] {
  const value = (options as Record<string, unknown>)[gate.key];
  const setting = value === undefined ? gate.bindDefault(env) : value;
  return setting === false ? [] : gate.surfaces(setting, context);
}

/** The surfaces of the API mount, in the order they are registered. */
export function apiSurfaces(options: SwitchOptions, context: SwitchContext & { env: EnvSettings }): Surface[] {
  const of = (gates: readonly AnySwitch[]) => gates.flatMap((gate) => mounted(gate, options, context.env, context));
  return [...of(LEADING), modelsSurface(), chatSurface(), responsesSurface(), ...of(TRAILING)];
}

/** The surfaces on mounts of their own (the Agent Protocol's): for a banner that lists every surface served. */
export function ownMountSurfaces(options: SwitchOptions, context: SwitchContext & { env: EnvSettings }): Surface[] {
  return (OWN as readonly AnySwitch[]).flatMap((gate) => mounted(gate, options, context.env, context));
}

/** What `chat-serve start` serves from the config's `server` settings, here, in this kind of process: one option per switch. */
export function switchSettings(server: Readonly<Record<string, unknown>>, place: SwitchPlace): SwitchOptions {
  return Object.fromEntries((SWITCHES as readonly AnySwitch[]).map((gate) => [gate.key, gate.fromConfig(server[gate.key], place)]));
}

/** The banner's rows for the surfaces `start` leaves off here that say why. */
export function offNotes(options: SwitchOptions, place: SwitchPlace): [label: string, text: string][] {
  return (SWITCHES as readonly AnySwitch[]).flatMap((gate) => {
    const note = (options as Record<string, unknown>)[gate.key] === false ? gate.offNote?.(place) : undefined;
    return note === undefined ? [] : [[gate.key, note] as [string, string]];
  });
}

/** The surfaces of the chat-ui profile's mount: the same models and runs, without the pages and the agent protocols. */
function chatUiSurfaces(): Surface[] {
  return [modelsSurface(), chatSurface(), responsesSurface()];
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
  context: SwitchContext & { env: EnvSettings },
): Promise<Surface[]> {
  const { prefix } = api;
  const added: Surface[] = [];
  const side = { probes: false, onInstance: () => {} };
  for (const gate of OWN as readonly AnySwitch[]) {
    const surfaces = mounted(gate, options, context.env, context);
    if (surfaces.length === 0) continue;
    const value = (options as Record<string, unknown>)[gate.key];
    const own = gate.ownPrefix!(value === undefined ? gate.bindDefault(context.env) : value);
    if (own === prefix) throw new TypeError(`server.${gate.key}.prefix must differ from the API prefix ${prefix === "" ? '""' : prefix}`);
    added.push(...surfaces);
    // Its own mount: its own error shape; the probes and the not-found page stay the API's.
    await app.register(chatServePlugin, { ...api, ...side, prefix: own, surfaces });
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
