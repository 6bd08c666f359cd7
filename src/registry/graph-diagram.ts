import type { ServableGraph } from "./servable-graph.js";

interface Drawable {
  drawMermaid(params?: { withStyles?: boolean }): string;
}

/**
 * LangGraph's own Mermaid drawing of a compiled graph (`getGraphAsync().drawMermaid()`, subgraphs
 * drawn inside their nodes); undefined for a graph that cannot draw itself.
 */
export async function graphMermaid(graph: ServableGraph): Promise<string | undefined> {
  const { getGraphAsync } = graph as { getGraphAsync?: (config: object) => Promise<Drawable> };
  if (typeof getGraphAsync !== "function") return undefined;
  const drawing = await getGraphAsync.call(graph, { xray: true });
  return typeof drawing?.drawMermaid === "function" ? drawing.drawMermaid() : undefined;
}
