import { existsSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { cosmiconfig, type Loader } from "cosmiconfig";
import { z } from "zod";
import { ConfigError } from "../errors/catalogue.js";
import { firstLine } from "../errors/first-line.js";
import { describeFirstIssue } from "../util/describe-issue.js";
import { configSchema, type ParsedConfig } from "./define-config.js";
import { ModuleLoader } from "./module-loader.js";

export const CONFIG_FILE_NAMES = [
  "chat-serve.config.ts",
  "chat-serve.config.mts",
  "chat-serve.config.js",
  "chat-serve.config.mjs",
  "chat-serve.config.json",
];

export interface LoadedConfig {
  /** Absolute path of the config file. */
  filepath: string;
  /** The path as the user should read it in messages (relative to the working directory). */
  displayPath: string;
  config: ParsedConfig;
  /** Loads the modules the config refers to, sharing the config's module cache. */
  modules: ModuleLoader;
}

/**
 * Finds and loads the config file: `--config` when given, else the first of
 * CONFIG_FILE_NAMES in the working directory (cosmiconfig loads it, jiti compiles TypeScript). Every mistake is one ConfigError line naming
 * the file and the key.
 */
export async function loadConfig(options: { configPath?: string; cwd?: string } = {}): Promise<LoadedConfig> {
  const cwd = options.cwd ?? process.cwd();
  const modules = new ModuleLoader(pathToFileURL(path.join(cwd, "noop.js")).href);
  const moduleLoader: Loader = async (filepath) => {
    const loaded = await modules.load(filepath);
    return "default" in loaded ? loaded.default : loaded;
  };
  const explorer = cosmiconfig("chat-serve", {
    loaders: { ".ts": moduleLoader, ".mts": moduleLoader, ".js": moduleLoader, ".mjs": moduleLoader },
    cache: false,
  });

  const filepath =
    options.configPath !== undefined
      ? path.resolve(cwd, options.configPath)
      : CONFIG_FILE_NAMES.map((name) => path.join(cwd, name)).find((candidate) => existsSync(candidate));
  if (filepath === undefined) {
    throw new ConfigError(`no config file found in ${cwd}: create chat-serve.config.ts (or run 'chat-serve init'), or pass --config`);
  }
  if (!existsSync(filepath)) throw new ConfigError(`config file not found: ${options.configPath}`);
  let result: Awaited<ReturnType<typeof explorer.load>>;
  try {
    result = await explorer.load(filepath);
  } catch (error) {
    throw new ConfigError(`${path.relative(cwd, filepath) || filepath}: could not be loaded: ${firstLine(error)}`, {
      cause: error,
    });
  }
  const displayPath = path.relative(cwd, filepath) || filepath;
  if (result === null || result.isEmpty || result.config === undefined || result.config === null) {
    throw new ConfigError(`${displayPath}: the file has no default export; export defineConfig({ ... })`);
  }
  try {
    return { filepath, displayPath, config: configSchema.parse(result.config), modules };
  } catch (error) {
    if (error instanceof z.ZodError) throw new ConfigError(`${displayPath}: ${describeFirstIssue(error)}`, { cause: error });
    throw error;
  }
}
