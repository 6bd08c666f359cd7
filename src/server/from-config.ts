import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { Embeddings } from "@langchain/core/embeddings";
import { z } from "zod";
import type { LoadedConfig } from "../config/load-config.js";
import { InMemoryRunCoordinator } from "../coordination/in-memory-run-coordinator.js";
import { ConfigError, RegistrationError } from "../errors/developer-errors.js";
import { firstLine } from "../errors/first-line.js";
import { isChatServeError } from "../errors/serve-error.js";
import { type ApiKeyEntry, type Authenticate, type AuthSettings, apiKeyEntrySchema } from "../http/auth.js";
import { type CustomRoutes, isFetchHandler } from "../http/custom-routes.js";
import { normalizePrefix } from "../http/env.js";
import { isLangGraphAuth, LangGraphAuth } from "../http/langgraph-auth.js";
import type { LimitSettings } from "../http/limits.js";
import type { CheckpointScope } from "../http/run-request.js";
import type { GraphConfigInput } from "../registry/graph-config.js";
import { GraphRegistry } from "../registry/graph-registry.js";
import { type GraphStoreIndex, isProviderString, moduleEmbeddings, providerEmbeddings } from "../store/graph-store-index.js";
import { didYouMean } from "../util/did-you-mean.js";
import { type BackendOptions, type Backends, backendsFromConfig } from "./backends.js";
import { loadModuleReference } from "./module-reference.js";

/** Everything a config file sets up for a server: registry, backends, checkpoint scope, auth. */
export interface ServerSetup {
  registry: GraphRegistry;
  backends: Backends;
  checkpointScope: CheckpointScope | undefined;
  auth: AuthSettings | undefined;
  /** The limits, with their counters in the Redis coordinator's Redis when there is one. */
  limits: LimitSettings | undefined;
  /** The project's own routes (`http.app`), imported. */
  customRoutes: CustomRoutes | undefined;
}

/** The API keys of `auth.keysFile`: a JSON array of `{ tenant, key | sha256, models? }`. */
async function readKeysFile(loaded: LoadedConfig, keysFile: string): Promise<ApiKeyEntry[]> {
  const file = path.resolve(path.dirname(loaded.filepath), keysFile);
  const where = `${loaded.displayPath}: auth.keysFile`;
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new ConfigError(`${where}: cannot read ${keysFile} (${(error as NodeJS.ErrnoException).code ?? firstLine(error)})`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${where}: ${keysFile} is not valid JSON (${firstLine(error)})`);
  }
  const parsed = z.array(apiKeyEntrySchema).safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(`${where}: ${keysFile}: ${issue.path.length === 0 ? "" : `${issue.path.join(".")}: `}${issue.message}`);
  }
  return parsed.data;
}

/**
 * Checks what `auth` and `limits` say against the registry without connecting anywhere, for
 * `chat-serve models`: the same one-line errors `start` gives.
 */
export async function checkAccessConfig(loaded: LoadedConfig, registry: GraphRegistry): Promise<void> {
  await authFromConfig(loaded, registry);
  checkLimitModels(loaded, registry);
}

function checkLimitModels(loaded: LoadedConfig, registry: GraphRegistry): void {
  const known = registry.getGraphNames();
  for (const model of Object.keys(loaded.config.limits?.perModel ?? {})) {
    if (!known.includes(model)) {
      throw new ConfigError(`${loaded.displayPath}: limits.perModel.${model}: '${model}' is not a model here${didYouMean(model, known)}`);
    }
  }
}

/** The `limits` section, its models checked, its counters shared through Redis when the coordinator is Redis. */
function limitsFromConfig(loaded: LoadedConfig, registry: GraphRegistry, backends: Backends): LimitSettings | undefined {
  const { limits } = loaded.config;
  if (limits === undefined) return undefined;
  checkLimitModels(loaded, registry);
  return {
    ...limits,
    ...(backends.redis === undefined ? {} : { redis: backends.redis.client, keyPrefix: `${backends.redis.keyPrefix}limits:` }),
  };
}

/** The `auth` section made ready: keys from the file too, `authenticate` imported, models checked. */
async function authFromConfig(loaded: LoadedConfig, registry: GraphRegistry): Promise<AuthSettings | undefined> {
  const { auth } = loaded.config;
  if (auth === undefined) return undefined;
  const keys = [...(auth.keys ?? []), ...(auth.keysFile === undefined ? [] : await readKeysFile(loaded, auth.keysFile))];
  const known = registry.getGraphNames();
  keys.forEach((entry, index) => {
    for (const model of entry.models ?? []) {
      if (!known.includes(model)) {
        const key = auth.keys !== undefined && index < auth.keys.length ? `auth.keys.${index}.models` : "auth.keysFile";
        throw new ConfigError(`${loaded.displayPath}: ${key}: '${model}' is not a model here${didYouMean(model, known)}`);
      }
    }
  });
  const authenticate =
    typeof auth.authenticate === "string"
      ? await loadModuleReference(auth.authenticate, {
          baseDir: path.dirname(loaded.filepath),
          file: loaded.displayPath,
          key: "auth.authenticate",
          modules: loaded.modules,
        })
      : auth.authenticate;
  if (authenticate !== undefined && typeof authenticate !== "function") {
    throw new ConfigError(`${loaded.displayPath}: auth.authenticate: must be a function of the request`);
  }
  const customAuth = await langGraphAuthFromConfig(loaded, auth.custom, auth.disableStudioAuth);
  if (keys.length === 0 && authenticate === undefined && customAuth === undefined) {
    throw new ConfigError(`${loaded.displayPath}: auth.keysFile: has no keys, and there is no auth.authenticate`);
  }
  return {
    keys,
    ...(authenticate === undefined ? {} : { authenticate: authenticate as Authenticate }),
    ...(customAuth === undefined ? {} : { customAuth }),
  };
}

/**
 * A LangGraph project's `Auth` (`langgraph.json`'s `auth.path`, a config's `auth.custom`),
 * imported now: a module that does not load, or that exports no `Auth`, stops the start with
 * one line naming the file and the key, never a server that lets callers in unchecked.
 */
async function langGraphAuthFromConfig(
  loaded: LoadedConfig,
  value: unknown,
  disableStudioAuth: boolean | undefined,
): Promise<LangGraphAuth | undefined> {
  if (value === undefined) return undefined;
  const key = loaded.langgraphJson === undefined ? "auth.custom" : "auth.path";
  const auth =
    typeof value === "string"
      ? await loadModuleReference(value, { baseDir: path.dirname(loaded.filepath), file: loaded.displayPath, key, modules: loaded.modules })
      : value;
  if (!isLangGraphAuth(auth)) {
    throw new ConfigError(
      `${loaded.displayPath}: ${key}: must be an Auth of @langchain/langgraph-sdk/auth (export const auth = new Auth()...)`,
    );
  }
  return new LangGraphAuth(auth, { disableStudioAuth: disableStudioAuth === true });
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
  const graphStoreIndex = await graphStoreIndexFromConfig(loaded);
  const backends = await backendsFromConfig(loaded.config, {
    ...options,
    timeoutMs: loaded.config.backendTimeoutMs,
    ...(graphStoreIndex === undefined ? {} : { graphStoreIndex }),
  });
  try {
    const registry = await registryFromConfig(loaded, backends);
    return {
      registry,
      backends,
      checkpointScope: scope as CheckpointScope | undefined,
      auth: await authFromConfig(loaded, registry),
      limits: limitsFromConfig(loaded, registry, backends),
      customRoutes: await customRoutesFromConfig(loaded),
    };
  } catch (error) {
    await backends.close();
    throw error;
  }
}

/**
 * The semantic index of LangGraph's store (`graphStore.index`, `langgraph.json`'s `store.index`),
 * its embeddings made now: a module that does not load, or a provider whose package is not
 * installed, stops the start with one line naming the file and the key.
 */
async function graphStoreIndexFromConfig(loaded: LoadedConfig): Promise<(GraphStoreIndex & { where: string }) | undefined> {
  const index = loaded.config.graphStore?.index;
  if (index === undefined) return undefined;
  const key = loaded.langgraphJson === undefined ? "graphStore.index" : "store.index";
  const where = `${loaded.displayPath}: ${key}.embed`;
  const baseDir = path.dirname(loaded.filepath);
  let embeddings: Embeddings;
  if (typeof index.embed === "string" && isProviderString(index.embed)) {
    embeddings = await providerEmbeddings(
      index.embed,
      where,
      (specifier) => import(pathToFileURL(createRequire(path.join(baseDir, "noop.js")).resolve(specifier)).href),
    );
  } else {
    const value =
      typeof index.embed === "string"
        ? await loadModuleReference(index.embed, { baseDir, file: loaded.displayPath, key: `${key}.embed`, modules: loaded.modules })
        : index.embed;
    embeddings = moduleEmbeddings(value, where);
  }
  return {
    dims: index.dims,
    embeddings,
    where: `${loaded.displayPath}: ${key}`,
    ...(index.fields === undefined ? {} : { fields: index.fields }),
  };
}

/** The project's own routes (`http.app`): a module that does not load, or exports no fetch handler, stops the start. */
async function customRoutesFromConfig(loaded: LoadedConfig): Promise<CustomRoutes | undefined> {
  const http = loaded.config.http;
  if (http === undefined) return undefined;
  const key = "http.app";
  const app =
    typeof http.app === "string"
      ? await loadModuleReference(http.app, {
          baseDir: path.dirname(loaded.filepath),
          file: loaded.displayPath,
          key,
          modules: loaded.modules,
        })
      : http.app;
  if (!isFetchHandler(app)) {
    throw new ConfigError(
      `${loaded.displayPath}: ${key}: must be a Hono app or an object with a fetch(request) method (export const app = new Hono()...)`,
    );
  }
  const prefix = http.prefix === undefined || http.prefix === "" ? "" : normalizePrefix(http.prefix, `${loaded.displayPath}: http.prefix`);
  return { fetch: (request) => app.fetch(request), auth: http.enableCustomRouteAuth, ...(prefix === "" ? {} : { prefix }) };
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
    // A langgraph.json graph with no description there: the compiled graph's own, when it has one.
    const own = (input.graph as { description?: unknown } | undefined)?.description;
    if (loaded.langgraphJson?.defaultDescriptions.has(modelId) && typeof own === "string" && own.trim() !== "")
      input.description = own.trim();
    inputs[modelId] = input as unknown as GraphConfigInput;
  }
  for (const [name, preset] of Object.entries(loaded.config.presets ?? {})) {
    const where = `${loaded.displayPath}: presets.${name}`;
    if (Object.hasOwn(inputs, name))
      throw new ConfigError(`${where}: '${name}' is already a model under graphs; give the preset another name`);
    const base = inputs[preset.from];
    if (base === undefined) {
      throw new ConfigError(`${where}.from: '${preset.from}' is not a model here${didYouMean(preset.from, Object.keys(inputs))}`);
    }
    const summary = Object.entries(preset.settings)
      .map(([key, value]) => `${key} ${JSON.stringify(value)}`)
      .join(", ");
    inputs[name] = {
      ...base,
      description: preset.description ?? `${base.description} (preset: ${summary})`,
      presetSettings: preset.settings,
    };
  }
  try {
    const registry = new GraphRegistry(
      inputs,
      backends === undefined
        ? { runCoordinator: new InMemoryRunCoordinator() }
        : {
            checkpointer: backends.checkpointer,
            runCoordinator: backends.runCoordinator,
            pendingRuns: backends.pendingRuns,
            store: backends.store,
            ...(backends.graphStore === undefined ? {} : { graphStore: backends.graphStore }),
          },
    );
    await registry.validateAll();
    return registry;
  } catch (error) {
    if (isChatServeError(error, RegistrationError)) {
      const preset = error.model !== undefined && Object.hasOwn(loaded.config.presets ?? {}, error.model);
      const key = preset && error.key === "presetSettings" ? "settings" : error.key;
      const where = [preset ? "presets" : "graphs", error.model, key].filter((part) => part !== undefined).join(".");
      throw new ConfigError(`${loaded.displayPath}: ${where}: ${error.reason}`, { cause: error });
    }
    throw error;
  }
}
