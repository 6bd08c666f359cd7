import type { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { CallbackManager, type Callbacks } from "@langchain/core/callbacks/manager";

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
  threadId?: string;
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
 * The runnable config of one run: callbacks, run name and tracing metadata, the abort
 * signal, typed runtime context, and the checkpoint thread for interrupt runs. Request
 * fields never go into `configurable`.
 */
export function buildRunConfig(input: RunConfigInput): Record<string, unknown> {
  const config: Record<string, unknown> = {
    callbacks: combineCallbacks(input.runtimeCallbacks, input.serviceHandlers),
    signal: input.signal,
  };
  if (input.traced) {
    const metadata: Record<string, unknown> = { "svc.request_id": input.requestId, "svc.model": input.model };
    if (input.operationId !== undefined) metadata["svc.operation_id"] = input.operationId;
    if (input.sessionId !== undefined) {
      metadata.tracing_session_id = input.sessionId;
      metadata.langfuse_session_id = input.sessionId;
      // The key Langfuse's JS callback handler reads the trace's session from.
      metadata.langfuseSessionId = input.sessionId;
    }
    config.runName = RUN_NAME;
    config.metadata = metadata;
  }
  if (input.context !== undefined) config.context = input.context;
  if (input.threadId !== undefined) config.configurable = { thread_id: input.threadId };
  return config;
}
