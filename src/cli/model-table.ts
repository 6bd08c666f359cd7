import chalk from "chalk";
import { wireFeatureName } from "../registry/features.js";
import type { GraphRegistry } from "../registry/graph-registry.js";
import { Table } from "./table.js";

/** One row of the model table, also the `--json` shape of `chat-serve models`. */
export interface ModelRow {
  id: string;
  description: string;
  features: string[];
  streamableNodeNames: string[];
  settings: boolean;
}

export function modelRows(registry: GraphRegistry): ModelRow[] {
  return registry.getGraphNames().map((id) => {
    const config = registry.getGraph(id);
    return {
      id,
      description: config.description,
      // A stateful graph (its own checkpointer, or threads: true) keeps conversations on threads.
      features: [...[...config.features].map(wireFeatureName), ...(registry.statefulIfResolved(id) === true ? ["threads"] : [])],
      streamableNodeNames: [...config.streamableNodeNames],
      settings: config.clientSettings !== undefined,
    };
  });
}

export function renderModelTable(rows: readonly ModelRow[]): string {
  const table = new Table({
    head: ["model", "description", "features", "streams from", "settings"].map((title) => chalk.bold(title)),
    style: { head: [], border: [] },
    wordWrap: true,
    colWidths: [null, 44, null, null, null] as unknown as number[],
  });
  for (const row of rows) {
    table.push([
      chalk.cyan(row.id),
      row.description,
      row.features.join(", ") || chalk.dim("-"),
      row.streamableNodeNames.join(", ") || chalk.dim("final message"),
      row.settings ? "yes" : chalk.dim("no"),
    ]);
  }
  return table.toString();
}
