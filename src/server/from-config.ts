import path from "node:path";
import type { LoadedConfig } from "../config/load-config.js";
import { InMemoryRunCoordinator } from "../coordination/in-memory-run-coordinator.js";
import { ConfigError, RegistrationError } from "../errors/catalogue.js";
import { isChatServeError } from "../errors/serve-error.js";
import type { CheckpointScope } from "../http/run-request.js";
import type { GraphConfigInput } from "../registry/graph-config.js";
import { GraphRegistry } from "../registry/graph-registry.js";
import { type BackendOptions, type Backends, backendsFromConfig } from "./backends.js";
import { loadModuleReference } from "./module-reference.js";

/** Everything a config file sets up for a server: registry, backends, checkpoint scope. */
export interface ServerSetup {
  registry: GraphRegistry;
  backends: Backends;
  checkpointScope: CheckpointScope | undefined;
}

/** Builds the backends, the registry and the checkpoint scope a config file describes. */
export async function serverSetupFromConfig(
  loaded: LoadedConfig,
  options: Pick<BackendOptions, "onConnectionError"> = {},
): Promise<ServerSetup> {
  const { checkpointScope } = loaded.config;
  const scope =
    typeof checkpointScope === "string"
      ? await loadModuleReference(checkpointScope, {
          baseDir: path.dirname(loaded.filepath),
          file: loaded.displayPath,
          key: "checkpointScope",
          modules: loaded.modules,
        })
      : checkpointScope;
  if (scope !== undefined && typeof scope !== "function") {
    throw new ConfigError(`${loaded.displayPath}: checkpointScope: must be a function of the request`);
  }
  const backends = await backendsFromConfig(loaded.config, { ...options, timeoutMs: loaded.config.backendTimeoutMs });
  try {
    return { registry: await registryFromConfig(loaded, backends), backends, checkpointScope: scope as CheckpointScope | undefined };
  } catch (error) {
    await backends.close();
    throw error;
  }
}

const REFERABLE_KEYS = [
  "graph",
  "clientSettings",
  "contextFactory",
  "runCoordinator",
  "runtimeCallbacks",
  "requestToInput",
  "outputToMessage",
] as const;

/**
 * Builds the registry a config file describes: module references are imported, every
 * entry passes the registry's validation, and every graph is resolved once, so `start`
 * and `models` report mistakes before serving.
 */
export async function registryFromConfig(loaded: LoadedConfig, backends?: Backends): Promise<GraphRegistry> {
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
    const registry = new GraphRegistry(
      inputs,
      backends === undefined
        ? { runCoordinator: new InMemoryRunCoordinator() }
        : { checkpointer: backends.checkpointer, runCoordinator: backends.runCoordinator, pendingRuns: backends.pendingRuns },
    );
    await registry.validateAll();
    return registry;
  } catch (error) {
    if (isChatServeError(error, RegistrationError)) {
      const where = ["graphs", error.model, error.key].filter((part) => part !== undefined).join(".");
      throw new ConfigError(`${loaded.displayPath}: ${where}: ${error.reason}`, { cause: error });
    }
    throw error;
  }
}
