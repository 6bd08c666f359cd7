/**
 * chat-serve: LangGraph.js graphs served as OpenAI-compatible chat-completions models.
 *
 * @example
 * ```ts
 * import { ChatServe, GraphRegistry } from "chat-serve";
 * const serve = new ChatServe({ graphs: new GraphRegistry({ echo: { graph, description: "Echo" } }) });
 * await (await serve.bind()).listen({ port: 8000 });
 * ```
 * @packageDocumentation
 */

export { type BindOptions, ChatServe, type ChatServeOptions } from "./app/chat-serve.js";
export { type ChatServeConfig, defineConfig, type GraphEntryConfig } from "./config/define-config.js";
export { InMemoryRunCoordinator } from "./coordination/in-memory-run-coordinator.js";
export {
  MemoryPendingRunIndex,
  type PendingRunEntry,
  type PendingRunIndex,
  type PendingRunRecord,
} from "./coordination/pending-run-index.js";
export { PostgresPendingRunIndex } from "./coordination/postgres-pending-run-index.js";
export { PostgresRunCoordinator, type PostgresRunCoordinatorOptions } from "./coordination/postgres-run-coordinator.js";
export { RedisRunCoordinator, type RedisRunCoordinatorOptions } from "./coordination/redis-run-coordinator.js";
export type { RunCoordinator, RunLease } from "./coordination/run-coordinator.js";
export * from "./errors/index.js";
export { type CitationAnnotation, citationSlice } from "./events/citations.js";
export { clientEvent, type ProgressData, type StatusData, statusEvent } from "./events/emit.js";
export { CLIENT_EVENT_TYPES, type ClientEventEnvelope, type ClientEventType, MAX_EVENT_BYTES } from "./events/envelope.js";
export type { ApiKeyEntry, Authenticate, AuthenticateResult, AuthSettings, Caller } from "./http/auth.js";
export { clientErrorHandler, frameworkErrorHandler, missingHostHook } from "./http/framework-errors.js";
export type { ReadinessCheck } from "./http/health.js";
export type { HttpTimeouts } from "./http/host-app.js";
export type { Limit, LimitSettings } from "./http/limits.js";
export type { MetricsSettings, ServerMetrics } from "./http/metrics.js";
export type { CheckpointScope } from "./http/run-request.js";
export {
  type ClientTool,
  PARAMETERS_METADATA_KEY,
  type RequestParameters,
  type ResponseFormat,
  requestParameters,
} from "./parameters/request-parameters.js";
export { withRequestParameters } from "./parameters/with-request-parameters.js";
export { GraphFeature } from "./registry/features.js";
export type { GraphConfig, GraphConfigInput, GraphSource } from "./registry/graph-config.js";
export type { GraphRegistryOptions } from "./registry/graph-registry.js";
export { GraphRegistry } from "./registry/graph-registry.js";
export type { ServableGraph } from "./registry/servable-graph.js";
export { INTERRUPT_TOOL_NAME } from "./runs/interrupts/interrupt-codec.js";
export { typedText } from "./runs/messages/typed-text.js";
export { PendingRunSweeper, type PendingRunSweeperOptions } from "./server/pending-run-sweeper.js";
export { StoreSweeper, type StoreSweeperOptions } from "./server/store-sweeper.js";
export { ClientSettings, type ClientSettingsModel, defineClientSettings } from "./settings/client-settings.js";
export type { ContextFactory, RunCaller } from "./settings/runtime-context.js";
export type {
  ConversationRecord,
  ConversationStore,
  ResponseRecord,
  SessionTurn,
  StoredItem,
  ThreadPoint,
} from "./store/conversation-store.js";
export { MemoryConversationStore, type MemoryStoreLimits } from "./store/memory-conversation-store.js";
export { PostgresConversationStore } from "./store/postgres-conversation-store.js";
export { TracingCallback, type TracingSettings } from "./tracing/tracing-callback.js";
export type { ChatCompletionRequest, ChatMessage } from "./wire/request.js";
