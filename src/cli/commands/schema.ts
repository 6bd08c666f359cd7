import { loadConfig } from "../../config/load-config.js";
import { UserError } from "../../errors/developer-errors.js";
import { registryFromConfig } from "../../server/from-config.js";

export interface SchemaOptions {
  config?: string;
}

/** `chat-serve schema <model>`: the client-settings descriptor exactly as retrieval shows it. */
export async function schemaCommand(model: string, options: SchemaOptions): Promise<void> {
  const loaded = await loadConfig({ configPath: options.config });
  const registry = await registryFromConfig(loaded);
  const names = registry.getGraphNames();
  if (!names.includes(model)) {
    throw new UserError(`model '${model}' is not in ${loaded.displayPath}; its models are: ${names.join(", ")}`);
  }
  const settings = registry.getGraph(model).clientSettings;
  if (settings === undefined) {
    throw new UserError(`model '${model}' declares no client settings (add clientSettings to it in ${loaded.displayPath})`);
  }
  process.stdout.write(`${JSON.stringify(settings.descriptor(), null, 2)}\n`);
}
