import { loadConfig } from "../../config/load-config.js";
import { UserError } from "../../errors/developer-errors.js";
import { graphMermaid } from "../../registry/graph-diagram.js";
import { checkAccessConfig, registryFromConfig } from "../../server/from-config.js";
import { didYouMean } from "../../util/did-you-mean.js";
import { modelRows, renderModelTable } from "../model-table.js";
import { langGraphNote } from "../output.js";

export interface ModelsOptions {
  config?: string;
  json?: boolean;
  /** A model whose graph to print as LangGraph's Mermaid drawing, instead of the table. */
  mermaid?: string;
}

/** `chat-serve models`: validates the registry and prints the model table (or one graph's diagram). */
export async function modelsCommand(options: ModelsOptions): Promise<void> {
  const loaded = await loadConfig({ configPath: options.config });
  const registry = await registryFromConfig(loaded);
  await checkAccessConfig(loaded, registry);
  if (options.mermaid !== undefined) {
    const names = registry.getGraphNames();
    if (!names.includes(options.mermaid)) {
      throw new UserError(
        `model '${options.mermaid}' is not in ${loaded.displayPath}${didYouMean(options.mermaid, names)}; its models are: ${names.join(", ")}`,
      );
    }
    const diagram = await graphMermaid(await registry.resolveGraph(options.mermaid));
    if (diagram === undefined)
      throw new UserError(`the graph of model '${options.mermaid}' cannot draw itself (it has no getGraphAsync())`);
    process.stdout.write(diagram.endsWith("\n") ? diagram : `${diagram}\n`);
    return;
  }
  const rows = modelRows(registry);
  const note = langGraphNote(loaded);
  // Never on stdout, which --json keeps for the table alone.
  if (note !== undefined) process.stderr.write(`${note}\n`);
  process.stdout.write(options.json === true ? `${JSON.stringify(rows, null, 2)}\n` : `${renderModelTable(rows)}\n`);
}
