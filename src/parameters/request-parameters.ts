import type { RequestParameters } from "../wire/parameters.js";

export type { ClientTool, RequestParameters, ResponseFormat } from "../wire/parameters.js";

/**
 * Where a run carries its parameters: the runnable config's `metadata`, which LangGraph hands
 * to every node, subgraph and model call of the run. Never `configurable`: request fields do
 * not go there.
 */
export const PARAMETERS_METADATA_KEY = "chat_serve_parameters";

/** A node's second argument: its config (LangGraph's runtime carries the config's fields). */
export type NodeConfig = object | undefined;

/**
 * The OpenAI request parameters of the run a node belongs to, read from the node's config
 * (its second argument). An empty object when the client sent none, or outside chat-serve.
 *
 * @example
 * ```ts
 * .addNode("respond", async (state, config) => {
 *   const { maxTokens, temperature } = requestParameters(config);
 *   // ...
 * })
 * ```
 */
export function requestParameters(config: NodeConfig): Readonly<RequestParameters> {
  const value = (config as { metadata?: Record<string, unknown> } | undefined)?.metadata?.[PARAMETERS_METADATA_KEY];
  return typeof value === "object" && value !== null ? (value as RequestParameters) : {};
}
