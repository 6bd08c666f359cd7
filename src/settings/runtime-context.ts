import { GraphConfigurationError } from "../errors/catalogue.js";
import type { ChatCompletionRequest } from "../wire/request.js";
import type { ClientSettingsModel } from "./client-settings.js";

/** Builds the final typed runtime context of a run; may return null for none. */
/** Who is calling: the authenticated tenant on a server with `auth`. */
export interface RunCaller {
  tenant?: string;
  /** The user a project's LangGraph `Auth` said is calling: graphs read it as on LangGraph's server. */
  authUser?: { user: Record<string, unknown> & { identity: string }; scopes: string[] };
}

export type ContextFactory = (
  request: ChatCompletionRequest,
  settings: Readonly<Record<string, unknown>> | undefined,
  caller: Readonly<RunCaller>,
) => unknown;

interface ContextInputs {
  model: string;
  clientSettings?: ClientSettingsModel;
  contextFactory?: ContextFactory;
  presetSettings?: Readonly<Record<string, unknown>>;
}

/** The context schema a compiled LangGraph graph declares, if any. */
function contextSchemaOf(graph: unknown): unknown {
  const builder = (graph as { builder?: { _configRuntimeSchema?: unknown; _configSchema?: unknown } } | null)?.builder;
  return builder?._configRuntimeSchema ?? builder?._configSchema;
}

/**
 * Registration rule (spec 2.4, rule 2): without a context factory, the validated settings
 * are the runtime context, so the graph's context schema must be the settings schema.
 */
export function checkContextSchema(inputs: ContextInputs, graph: unknown): void {
  if (inputs.clientSettings === undefined || inputs.contextFactory !== undefined) return;
  if (contextSchemaOf(graph) !== inputs.clientSettings.schema) {
    throw new GraphConfigurationError(
      `the graph of model '${inputs.model}' must declare its client settings as its context schema: ` +
        `new StateGraph(State, Settings.schema), or give a contextFactory`,
    );
  }
}

/**
 * The runtime context of one run (spec 2.4, rules 1–4): settings are validated first; a
 * context factory receives them and its non-null result is passed through unchanged;
 * without a factory the frozen settings are the context.
 */
export async function resolveRuntimeContext(
  model: string,
  inputs: Omit<ContextInputs, "model">,
  graph: unknown,
  request: ChatCompletionRequest,
  caller: Readonly<RunCaller> = {},
): Promise<unknown> {
  const settings = inputs.clientSettings?.validateRequest(request, inputs.presetSettings);
  if (inputs.contextFactory === undefined) return settings;
  const context = await inputs.contextFactory(request, settings, caller);
  if (context === null || context === undefined) return undefined;
  if (contextSchemaOf(graph) === undefined) {
    throw new GraphConfigurationError(
      `The contextFactory of model '${model}' returned a context, but its graph declares no context schema.`,
    );
  }
  return context;
}
