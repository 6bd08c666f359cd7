import { loadConfig } from "../../config/load-config.js";
import { checkAccessConfig, registryFromConfig } from "../../server/from-config.js";
import { modelRows, renderModelTable } from "../model-table.js";

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
  process.stdout.write(options.json === true ? `${JSON.stringify(rows, null, 2)}\n` : `${renderModelTable(rows)}\n`);
}
