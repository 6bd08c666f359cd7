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
export { defineConfig, type ChatServeConfig, type GraphEntryConfig } from "./config/define-config.js";
export { ChatServe, type ChatServeOptions, type BindOptions, type HttpTimeouts } from "./http/chat-serve.js";
export { frameworkErrorHandler, clientErrorHandler } from "./http/framework-errors.js";
export { GraphRegistry } from "./registry/graph-registry.js";
export { GraphFeature } from "./registry/features.js";
export type { GraphConfig, GraphConfigInput, GraphSource } from "./registry/graph-config.js";
export type { ServableGraph } from "./registry/servable-graph.js";
export { defineClientSettings, ClientSettings, type ClientSettingsModel } from "./settings/client-settings.js";
export type { ContextFactory } from "./settings/runtime-context.js";
export { statusEvent, clientEvent, type StatusData, type ProgressData } from "./events/emit.js";
export { CLIENT_EVENT_TYPES, MAX_EVENT_BYTES, type ClientEventEnvelope, type ClientEventType } from "./events/envelope.js";
export { citationSlice, type CitationAnnotation } from "./events/citations.js";
export { TracingCallback, type TracingSettings } from "./tracing/tracing-callback.js";
export { InMemoryRunCoordinator } from "./coordination/in-memory-run-coordinator.js";
export { RedisRunCoordinator, type RedisRunCoordinatorOptions } from "./coordination/redis-run-coordinator.js";
export { PostgresRunCoordinator, type PostgresRunCoordinatorOptions } from "./coordination/postgres-run-coordinator.js";
export { PostgresPendingRunIndex } from "./coordination/postgres-pending-run-index.js";
export type { RunCoordinator, RunLease } from "./coordination/run-coordinator.js";
export { MemoryPendingRunIndex, type PendingRunIndex, type PendingRunEntry } from "./coordination/pending-run-index.js";
export type { CheckpointScope } from "./http/routes/chat-completions.js";
export type { GraphRegistryOptions } from "./registry/graph-registry.js";
export { INTERRUPT_TOOL_NAME } from "./runs/interrupts/interrupt-codec.js";
export type { ReadinessCheck } from "./http/routes/health.js";
export type { ChatCompletionRequest, ChatMessage } from "./wire/request.js";
export * from "./errors/index.js";
