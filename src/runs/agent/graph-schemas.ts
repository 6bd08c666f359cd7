import type { StaticSchemas } from "./static-schemas.js";

/** The JSON schemas of a graph's input, output, state, config and context, as `/assistants/{id}/schemas` gives them. */
export interface GraphSchemas {
  input_schema: unknown;
  output_schema: unknown;
  state_schema: unknown;
  config_schema: unknown;
  context_schema: unknown;
}

// Channels LangGraph adds to every graph; not part of its state.
const INTERNAL = /^(__start__|__end__|__pregel_|branch:|start:|__interrupt__|__resume__|__error__)/u;

/** The state as its channel names: all an Annotation-based graph says of itself at runtime. */
function channelSchema(graph: { channels?: Record<string, unknown> }): Record<string, unknown> | null {
  const names = Object.keys(graph.channels ?? {}).filter((name) => !INTERNAL.test(name) && !name.includes(":"));
  if (names.length === 0) return null;
  return { type: "object", properties: Object.fromEntries(names.map((name) => [name, {}])) };
}

type SchemaOf = (graph: unknown) => unknown;

/**
 * A graph's schemas: from its zod state and context (LangGraph's own converters, which read the
 * `withLangGraph` metadata) when it has them; what they leave out (an `Annotation.Root` state or
 * configuration) from the graph's TypeScript types when `typed` can read them, as `langgraphjs
 * dev` does; otherwise its state's channels by name, and the input as the same object with
 * nothing required.
 */
export async function graphSchemas(
  graph: { channels?: Record<string, unknown> },
  typed?: () => Promise<StaticSchemas | undefined>,
): Promise<GraphSchemas> {
  let zod: Record<string, unknown> | undefined;
  try {
    const schema = (await import("@langchain/langgraph/zod/schema")) as unknown as Record<string, SchemaOf>;
    const read = (name: string) => {
      try {
        return schema[name]?.(graph) ?? null;
      } catch {
        return null;
      }
    };
    zod = {
      state: read("getStateTypeSchema"),
      input: read("getInputTypeSchema"),
      output: read("getOutputTypeSchema"),
      config: read("getConfigTypeSchema"),
    };
  } catch {
    zod = undefined;
  }
  const read = zod?.state == null || zod.config == null ? await typed?.() : undefined;
  const channels = channelSchema(graph);
  const state = zod?.state ?? read?.state ?? channels;
  // From JavaScript a graph's config and context schemas are one, as LangGraph's server gives them.
  const config = zod?.config ?? read?.config ?? null;
  return {
    input_schema: zod?.input ?? (zod?.state == null ? read?.input : undefined) ?? state,
    output_schema: zod?.output ?? (zod?.state == null ? read?.output : undefined) ?? state,
    state_schema: state,
    config_schema: config,
    context_schema: config,
  };
}
