import type { Callbacks } from "@langchain/core/callbacks/manager";
import type { BaseMessage } from "@langchain/core/messages";
import { z } from "zod";
import type { RunCoordinator } from "../coordination/run-coordinator.js";
import type { ToolEventsSetting } from "../events/tool-events.js";
import { ClientSettings, type ClientSettingsModel } from "../settings/client-settings.js";
import type { ContextFactory } from "../settings/runtime-context.js";
import { PARSE_ONCE } from "../util/parse-once.js";
import type { ChatCompletionRequest } from "../wire/request.js";
import { ALL_FEATURES, GraphFeature } from "./features.js";
import type { ServableGraph } from "./servable-graph.js";

/** A compiled graph, a StateGraph, or a sync or async factory returning either. */
export type GraphSource = ServableGraph | { compile(options?: object): unknown } | (() => unknown);

/** What a graph author registers under one model name. */
export interface GraphConfigInput {
  /** A compiled graph, a StateGraph (compiled at load) or a sync/async factory. */
  graph: GraphSource;
  /** Advertised in the model list and retrieval. */
  description: string;
  /**
   * Nodes whose streamed assistant message chunks are forwarded as assistant text. `"auto"`:
   * every node of the graph except its tool nodes (`ToolNode`) and `createAgent`'s middleware
   * hooks (`<middleware>.before_model` and the like), the default of a `langgraph.json` project.
   */
  streamableNodeNames?: Iterable<string> | "auto";
  /** Optional behaviours: `CLIENT_EVENTS`, `INTERRUPTS`. */
  features?: Iterable<GraphFeature | Lowercase<GraphFeature>>;
  /** Public settings a client may set per request (`defineClientSettings`). */
  clientSettings?: ClientSettingsModel;
  /** Builds the typed runtime context from the request and the validated settings. */
  contextFactory?: ContextFactory;
  /** Callbacks added to every run's config. The service never mutates them. */
  runtimeCallbacks?: Callbacks;
  /** Single-flight coordinator of interrupt runs; required for `INTERRUPTS` (or a registry default). */
  runCoordinator?: RunCoordinator;
  /** Maps the chat request to graph input. Default: `{ messages }`. */
  requestToInput?: (request: ChatCompletionRequest, messages: BaseMessage[]) => unknown;
  /** Maps graph output to the assistant message. Default: the last AI message of `output.messages`. */
  outputToMessage?: (output: unknown) => BaseMessage | Promise<BaseMessage>;
  /** A model preset: client settings that replace the defaults (a request may still change them). */
  presetSettings?: Record<string, unknown>;
  /** `false`: the model's reasoning never reaches clients (default: it does). */
  reasoning?: boolean;
  /**
   * `true`: a stateful graph on the server's checkpointer, whose conversations continue on a
   * thread (a graph compiled with a checkpointer of its own is stateful anyway).
   */
  threads?: boolean;
  /**
   * Background runs of this graph. `retry: true`: a run whose worker stopped (killed, or out
   * of its shutdown grace) starts again from the beginning on another worker when the
   * deployment has no durable checkpointer to go on from its last step; the graph must bear
   * its steps running twice. Default: such a run ends failed.
   */
  background?: { retry?: boolean };
  /**
   * `true`: the graph answers in the JSON a client asks for (`response_format` / `text.format`,
   * applied to its model with `withRequestParameters`). Without it such a request is refused.
   */
  structuredOutput?: boolean;
  /**
   * Events the server emits for the graph (they reach a client only with `CLIENT_EVENTS`, as
   * every event does). `tools`: a status when a tool of the graph starts ("Calling
   * get_weather") and when it ends, nested subgraphs included; `true` for every tool with the
   * default texts, or per tool its texts or `false`. Default: on in the `chat-ui` profile only.
   */
  events?: { tools?: ToolEventsSetting };
}

/** A validated, frozen graph configuration as the registry hands it out. */
export interface GraphConfig {
  readonly graph: GraphSource;
  readonly description: string;
  readonly streamableNodeNames: readonly string[];
  /** `streamableNodeNames: "auto"`: the registry fills the list from the compiled graph. */
  readonly autoStreamableNodes: boolean;
  readonly features: ReadonlySet<GraphFeature>;
  readonly clientSettings?: ClientSettingsModel;
  readonly contextFactory?: ContextFactory;
  readonly runtimeCallbacks?: Callbacks;
  readonly runCoordinator?: RunCoordinator;
  readonly requestToInput?: GraphConfigInput["requestToInput"];
  readonly outputToMessage?: GraphConfigInput["outputToMessage"];
  readonly presetSettings?: Readonly<Record<string, unknown>>;
  readonly reasoning: boolean;
  readonly structuredOutput: boolean;
  readonly threads: boolean;
  readonly background: { readonly retry: boolean };
  /** `undefined`: the default (on in the `chat-ui` profile only). */
  readonly events: { readonly tools?: ToolEventsSetting };
}

const optionalFunction = z.custom<(...args: never[]) => unknown>((value) => typeof value === "function", "must be a function").optional();

const iterableOf = <T extends z.ZodType>(item: T) =>
  z.preprocess(
    (value) =>
      value !== null && typeof value === "object" && Symbol.iterator in value && !Array.isArray(value)
        ? [...(value as Iterable<unknown>)]
        : value,
    z.array(item),
  );

const featureSchema = z.preprocess(
  (value) => (typeof value === "string" ? value.toUpperCase() : value),
  z.enum(ALL_FEATURES as [GraphFeature, ...GraphFeature[]], {
    error: (issue) => `unknown feature ${JSON.stringify(issue.input)}; use ${ALL_FEATURES.join(" or ")}`,
  }),
);

const toolText = z.string().trim().min(1, "must not be empty");
/** `events.tools`: true or false, or per tool its texts (`"Checking the weather"`, `{ start, end, failed }`) or false. */
export const toolEventsSchema = z.union(
  [
    z.boolean(),
    z.record(
      z.string(),
      z.union(
        [z.literal(false), toolText, z.strictObject({ start: toolText.optional(), end: toolText.optional(), failed: toolText.optional() })],
        {
          error: "must be false, the start text, or { start, end, failed } texts",
        },
      ),
    ),
  ],
  { error: "must be true, false, or an object of tool name → texts" },
);

const graphConfigSchema = z.strictObject({
  graph: z.custom<GraphSource>(
    (value) => (typeof value === "object" && value !== null) || typeof value === "function",
    "must be a compiled graph, a StateGraph or a factory function",
  ),
  description: z.string("must be a string").trim().min(1, "must not be empty"),
  streamableNodeNames: z
    .union([z.literal("auto"), iterableOf(z.string().min(1))], { error: 'must be a list of node names or "auto"' })
    .optional(),
  features: iterableOf(featureSchema).optional(),
  clientSettings: z
    .custom<ClientSettingsModel>(ClientSettings.isClientSettings, "must be made with defineClientSettings(z.strictObject({...}))")
    .optional(),
  contextFactory: optionalFunction,
  runtimeCallbacks: z
    .custom<Callbacks>(
      (value) => Array.isArray(value) || (typeof value === "object" && value !== null),
      "must be a list of callback handlers or a callback manager",
    )
    .optional(),
  runCoordinator: z
    .custom<RunCoordinator>(
      (value) => typeof (value as RunCoordinator | null)?.tryAcquire === "function",
      "must be a run coordinator (InMemoryRunCoordinator, RedisRunCoordinator or PostgresRunCoordinator)",
    )
    .optional(),
  requestToInput: optionalFunction,
  outputToMessage: optionalFunction,
  presetSettings: z.record(z.string(), z.unknown()).optional(),
  reasoning: z.boolean("must be true or false").optional(),
  structuredOutput: z.boolean("must be true or false").optional(),
  threads: z.boolean("must be true or false").optional(),
  background: z.strictObject({ retry: z.boolean("must be true or false").optional() }).optional(),
  events: z.strictObject({ tools: toolEventsSchema.optional() }).optional(),
});

/** Validates one configuration; throws the zod error for the caller to word. */
export function parseGraphConfig(input: unknown): GraphConfig {
  const parsed = graphConfigSchema.parse(input, PARSE_ONCE);
  return Object.freeze({
    graph: parsed.graph,
    description: parsed.description,
    streamableNodeNames: Object.freeze(parsed.streamableNodeNames === "auto" ? [] : [...new Set(parsed.streamableNodeNames ?? [])]),
    autoStreamableNodes: parsed.streamableNodeNames === "auto",
    features: new Set(parsed.features ?? []) as ReadonlySet<GraphFeature>,
    clientSettings: parsed.clientSettings,
    contextFactory: parsed.contextFactory as ContextFactory | undefined,
    runtimeCallbacks: parsed.runtimeCallbacks,
    runCoordinator: parsed.runCoordinator,
    requestToInput: parsed.requestToInput as GraphConfigInput["requestToInput"],
    outputToMessage: parsed.outputToMessage as GraphConfigInput["outputToMessage"],
    presetSettings: parsed.presetSettings === undefined ? undefined : Object.freeze({ ...parsed.presetSettings }),
    reasoning: parsed.reasoning ?? true,
    structuredOutput: parsed.structuredOutput ?? false,
    threads: parsed.threads ?? false,
    background: Object.freeze({ retry: parsed.background?.retry ?? false }),
    events: Object.freeze(parsed.events?.tools === undefined ? {} : { tools: parsed.events.tools }),
  });
}

export { GraphFeature };
