import type { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { CallbackManager, type Callbacks } from "@langchain/core/callbacks/manager";
import type { BaseStore } from "@langchain/langgraph";
import { PARAMETERS_METADATA_KEY } from "../parameters/request-parameters.js";
import type { RunCaller } from "../settings/runtime-context.js";
import type { RequestParameters } from "../wire/parameters.js";

const RUN_NAME = "svc.chat_completion";

export interface RunConfigInput {
  requestId: string;
  model: string;
  runtimeCallbacks: Callbacks | undefined;
  /** Handlers the service adds for this run (usage, tracing); never written into the registered ones. */
  serviceHandlers: BaseCallbackHandler[];
  /** True when a handler is present that observes runs (user or tracing callbacks). */
  traced: boolean;
  sessionId?: string;
  operationId?: string;
  signal: AbortSignal;
  context?: unknown;
  /** The user a project's LangGraph `Auth` said is calling (`RunCaller.authUser`). */
  user?: NonNullable<RunCaller["authUser"]>;
  /** The checkpoint thread (and the checkpoint to continue from) of a graph with a checkpointer. */
  thread?: { thread_id: string; checkpoint_id?: string };
  /**
   * `sync`: each step's checkpoint is written before the next step starts (a durable
   * background run, which another worker may take over from its last step). Default: LangGraph's.
   */
  durability?: "sync";
  /** The client's OpenAI parameters, for `requestParameters(config)` in graph code. */
  parameters: RequestParameters;
  /**
   * LangGraph's store for a graph compiled without one (`config.store`, `getStore()` in graph
   * code): the same store the Agent Protocol's runs and its `/store` routes use.
   */
  store?: BaseStore;
}

/** Combines registered callbacks with the service's own, copying rather than mutating. */
function combineCallbacks(registered: Callbacks | undefined, added: BaseCallbackHandler[]): Callbacks {
  if (registered === undefined) return [...added];
  if (Array.isArray(registered)) return [...registered, ...added];
  if (registered instanceof CallbackManager || typeof (registered as CallbackManager).copy === "function") {
    return (registered as CallbackManager).copy(added);
  }
  return [...added];
}

/**
 * The runnable config of one run: callbacks, run name and tracing metadata, the client's
 * request parameters, the abort signal, typed runtime context, and the checkpoint thread for
 * interrupt runs. Request fields never go into `configurable`.
 */
export function buildRunConfig(input: RunConfigInput): Record<string, unknown> {
  const config: Record<string, unknown> = {
    callbacks: combineCallbacks(input.runtimeCallbacks, input.serviceHandlers),
    signal: input.signal,
  };
  const metadata: Record<string, unknown> = {};
  // Metadata reaches every node and model call of the run; only set when there is something to carry.
  if (Object.keys(input.parameters).length > 0) metadata[PARAMETERS_METADATA_KEY] = input.parameters;
  if (input.traced) {
    metadata["svc.request_id"] = input.requestId;
    metadata["svc.model"] = input.model;
    if (input.operationId !== undefined) metadata["svc.operation_id"] = input.operationId;
    if (input.sessionId !== undefined) {
      metadata.tracing_session_id = input.sessionId;
      metadata.langfuse_session_id = input.sessionId;
      // The key Langfuse's JS callback handler reads the trace's session from.
      metadata.langfuseSessionId = input.sessionId;
    }
    config.runName = RUN_NAME;
  }
  if (Object.keys(metadata).length > 0) config.metadata = metadata;
  if (input.context !== undefined) config.context = input.context;
  if (input.thread !== undefined) config.configurable = { ...input.thread };
  if (input.user !== undefined) {
    // Where LangGraph's server puts the user its `Auth` returned, for graphs that act on their behalf.
    config.configurable = {
      ...(config.configurable as Record<string, unknown> | undefined),
      langgraph_auth_user: input.user.user,
      langgraph_auth_user_id: input.user.user.identity,
      langgraph_auth_permissions: input.user.scopes,
    };
  }
  if (input.durability !== undefined) config.durability = input.durability;
  if (input.store !== undefined) config.store = input.store;
  return config;
}
