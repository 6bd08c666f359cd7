import { loadConfig } from "../../config/load-config.js";
import { checkAccessConfig, registryFromConfig } from "../../server/from-config.js";
import { modelRows, renderModelTable } from "../model-table.js";
import { langGraphNote } from "../output.js";

export interface ModelsOptions {
  config?: string;
  json?: boolean;
}

/** `chat-serve models`: validates the registry and prints the model table. */
export async function modelsCommand(options: ModelsOptions): Promise<void> {
  const loaded = await loadConfig({ configPath: options.config });
  const registry = await registryFromConfig(loaded);
  await checkAccessConfig(loaded, registry);
  const rows = modelRows(registry);
  const note = langGraphNote(loaded);
  // Never on stdout, which --json keeps for the table alone.
  if (note !== undefined) process.stderr.write(`${note}\n`);
  process.stdout.write(options.json === true ? `${JSON.stringify(rows, null, 2)}\n` : `${renderModelTable(rows)}\n`);
}
