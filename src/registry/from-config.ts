import path from "node:path";
import { ConfigError, RegistrationError } from "../errors/catalogue.js";
import type { LoadedConfig } from "../config/load-config.js";
import type { GraphConfigInput } from "./graph-config.js";
import { GraphRegistry } from "./graph-registry.js";
import { loadModuleReference } from "./module-reference.js";

const REFERABLE_KEYS = [
  "graph",
  "clientSettings",
  "contextFactory",
  "runtimeCallbacks",
  "requestToInput",
  "outputToMessage",
] as const;

/**
 * Builds the registry a config file describes: module references are imported, every
 * entry passes the registry's validation, and every graph is resolved once, so `start`
 * and `models` report mistakes before serving.
 */
export async function registryFromConfig(loaded: LoadedConfig): Promise<GraphRegistry> {
  const baseDir = path.dirname(loaded.filepath);
  const inputs: Record<string, GraphConfigInput> = {};
  for (const [modelId, entry] of Object.entries(loaded.config.graphs)) {
    const input: Record<string, unknown> = { ...entry };
    for (const key of REFERABLE_KEYS) {
      const value = entry[key];
      if (typeof value !== "string") continue;
      input[key] = await loadModuleReference(value, {
        baseDir,
        file: loaded.displayPath,
        key: `graphs.${modelId}.${key}`,
        modules: loaded.modules,
      });
    }
    inputs[modelId] = input as unknown as GraphConfigInput;
  }
  try {
    const registry = new GraphRegistry(inputs);
    await registry.validateAll();
    return registry;
  } catch (error) {
    if (error instanceof RegistrationError) {
      const where = ["graphs", error.model, error.key].filter((part) => part !== undefined).join(".");
      throw new ConfigError(`${loaded.displayPath}: ${where}: ${error.reason}`, { cause: error });
    }
    throw error;
  }
}
