import type { WireFeature } from "../wire/response.js";

/** Optional server behaviours a graph opts into. */
export const GraphFeature = {
  /** Status, progress and artifact events carried in streamed chunks. */
  CLIENT_EVENTS: "CLIENT_EVENTS",
  /** Human-in-the-loop: interrupts become `graph_interrupt` tool calls, answered to resume. */
  INTERRUPTS: "INTERRUPTS",
} as const;

export type GraphFeature = (typeof GraphFeature)[keyof typeof GraphFeature];

export const ALL_FEATURES: readonly GraphFeature[] = [GraphFeature.CLIENT_EVENTS, GraphFeature.INTERRUPTS];

/** The lower-case name a feature has on the wire and in the CLI table. */
export function wireFeatureName(feature: GraphFeature): WireFeature {
  return feature.toLowerCase() as WireFeature;
}
