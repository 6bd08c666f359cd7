import { z } from "zod";
import { type GraphConfigInput, toolEventsSchema } from "../registry/graph-config.js";
import { type Referable, valueOrReference } from "./config-values.js";

/** One entry of `graphs`: the graph and how it is served. */
export const graphEntrySchema = z.strictObject({
  graph: valueOrReference("a graph, a StateGraph or a factory"),
  description: z.string("is required: a sentence that tells users what the model does").trim().min(1, "must not be empty"),
  streamableNodeNames: z
    .union([z.literal("auto"), z.array(z.string().min(1))], { error: 'must be a list of node names or "auto"' })
    .optional(),
  features: z.array(z.string()).optional(),
  clientSettings: valueOrReference("client settings made with defineClientSettings").optional(),
  contextFactory: valueOrReference("a function").optional(),
  runCoordinator: valueOrReference("a run coordinator").optional(),
  runtimeCallbacks: valueOrReference("a list of callback handlers or a callback manager").optional(),
  requestToInput: valueOrReference("a function").optional(),
  outputToMessage: valueOrReference("a function").optional(),
  reasoning: z.boolean("must be true or false").optional(),
  structuredOutput: z.boolean("must be true or false").optional(),
  threads: z.boolean("must be true or false").optional(),
  background: z.strictObject({ retry: z.boolean("must be true or false").optional() }).optional(),
  events: z.strictObject({ tools: toolEventsSchema.optional() }).optional(),
});

/** One model of the config file. Values may be given directly or as `"./module.ts:export"`. */
export interface GraphEntryConfig {
  graph: Referable<GraphConfigInput["graph"]>;
  description: string;
  /** Nodes whose model output is the answer; `"auto"`: every node but tool nodes and middleware hooks. */
  streamableNodeNames?: string[] | "auto";
  features?: ("CLIENT_EVENTS" | "INTERRUPTS" | "client_events" | "interrupts")[];
  clientSettings?: Referable<NonNullable<GraphConfigInput["clientSettings"]>>;
  runCoordinator?: Referable<NonNullable<GraphConfigInput["runCoordinator"]>>;
  contextFactory?: Referable<NonNullable<GraphConfigInput["contextFactory"]>>;
  runtimeCallbacks?: Referable<NonNullable<GraphConfigInput["runtimeCallbacks"]>>;
  requestToInput?: Referable<NonNullable<GraphConfigInput["requestToInput"]>>;
  outputToMessage?: Referable<NonNullable<GraphConfigInput["outputToMessage"]>>;
  /** `false`: never send this model's reasoning to clients (default: send it). */
  reasoning?: boolean;
  /** `true`: the graph answers in the JSON a client asks for with `response_format` / `text.format`. */
  structuredOutput?: boolean;
  /** `true`: a stateful graph on the server's `checkpointer`: conversations continue on a thread. */
  threads?: boolean;
  /**
   * `retry: true`: a background run whose worker stopped starts again from the beginning on
   * another worker when there is no durable checkpointer to go on from its last step.
   */
  background?: { retry?: boolean };
  /**
   * Events the server emits for this model (with `CLIENT_EVENTS`): `tools: true` sends a status
   * when a tool starts and ends; per tool, `{ get_weather: "Checking the weather" }` or `false`.
   * Default: on in the `chat-ui` profile only.
   */
  events?: GraphConfigInput["events"];
}
