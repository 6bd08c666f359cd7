import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { stripVTControlCharacters } from "node:util";
import { z } from "zod";
import { ConfigError } from "../errors/developer-errors.js";
import { firstLine } from "../errors/first-line.js";
import { describeFirstIssue } from "../util/describe-issue.js";
import { didYouMean } from "../util/did-you-mean.js";
import { PARSE_ONCE } from "../util/parse-once.js";
import { agentServerSettings, configSchema, type ParsedConfig } from "./define-config.js";
import {
  applyLangGraphEnv,
  defaultDescription,
  LANGGRAPH_DEFAULTS,
  LANGGRAPH_JSON,
  type LangGraphProject,
  readLangGraphJson,
} from "./langgraph-json.js";
import { ModuleLoader } from "./module-loader.js";

export const CONFIG_FILE_NAMES = [
  "chat-serve.config.ts",
  "chat-serve.config.mts",
  "chat-serve.config.js",
  "chat-serve.config.mjs",
  "chat-serve.config.json",
];

const MODULE_EXTENSIONS = new Set([".ts", ".mts", ".cts", ".js", ".mjs", ".cjs"]);

export interface LoadedConfig {
  /** Absolute path of the config file. */
  filepath: string;
  /** The path as the user should read it in messages (relative to the working directory). */
  displayPath: string;
  config: ParsedConfig;
  /** Loads the modules the config refers to, sharing the config's module cache. */
  modules: ModuleLoader;
  /** Set when the models come from a LangGraph project's `langgraph.json` (no chat-serve config). */
  langgraphJson?: {
    project: LangGraphProject;
    /** The models whose description is a default: the compiled graph's own `description` replaces it. */
    defaultDescriptions: Set<string>;
  };
}

/**
 * Finds and loads the config file: `--config` when given, else the first of
 * CONFIG_FILE_NAMES in the working directory (jiti compiles TypeScript; cosmiconfig reads JSON). Every mistake is one ConfigError line naming
 * the file and the key.
 */
export async function loadConfig(
  options: {
    configPath?: string;
    cwd?: string;
    /**
     * For the operator commands (`pending`, `purge-pending`, `responses`), which read the
     * backends and serve nothing: `auth` is left out, so the API keys' environment variables
     * need not be set where a cron job runs.
     */
    operator?: boolean;
  } = {},
): Promise<LoadedConfig> {
  const cwd = options.cwd ?? process.cwd();
  const modules = new ModuleLoader(pathToFileURL(path.join(cwd, "noop.js")).href);
  const filepath = findConfigFile(options.configPath, cwd);
  if (filepath === undefined) {
    throw new ConfigError(
      `no config file found in ${cwd}: create chat-serve.config.ts (or run 'chat-serve init'), pass --config, or run it in a LangGraph project (a folder with ${LANGGRAPH_JSON})`,
    );
  }
  if (!existsSync(filepath)) throw new ConfigError(`config file not found: ${options.configPath}`);
  if (path.basename(filepath) === LANGGRAPH_JSON) return fromLangGraphJson(filepath, path.relative(cwd, filepath) || filepath, modules);
  let config: unknown;
  try {
    config = await readConfigFile(filepath, modules);
  } catch (error) {
    throw new ConfigError(loadFailure(error, filepath, path.relative(cwd, filepath) || filepath), { cause: error });
  }
  const displayPath = path.relative(cwd, filepath) || filepath;
  if (config === undefined || config === null) {
    throw new ConfigError(`${displayPath}: the file has no default export; export defineConfig({ ... })`);
  }
  try {
    const raw = options.operator === true ? { ...(config as Record<string, unknown>), auth: undefined } : config;
    return { filepath, displayPath, config: configSchema.parse(raw, PARSE_ONCE), modules };
  } catch (error) {
    if (error instanceof z.ZodError) throw new ConfigError(`${displayPath}: ${describeConfigIssue(error)}`, { cause: error });
    throw error;
  }
}

/**
 * The config a file exports. A module (TypeScript or JavaScript) is loaded as the graphs are,
 * sharing their module cache; any other file (JSON, YAML) is read by cosmiconfig, loaded then
 * (start-up pays nothing for it otherwise), whose errors say where the file is wrong.
 */
async function readConfigFile(filepath: string, modules: ModuleLoader): Promise<unknown> {
  if (MODULE_EXTENSIONS.has(path.extname(filepath))) {
    const loaded = await modules.load(filepath);
    return "default" in loaded ? loaded.default : loaded;
  }
  const { cosmiconfig } = await import("cosmiconfig");
  const result = await cosmiconfig("chat-serve", { cache: false }).load(filepath);
  return result === null || result.isEmpty === true ? undefined : result.config;
}

/** The config file `loadConfig` would read: `--config`, else the first of the known names that exists. */
export function findConfigFile(configPath: string | undefined, cwd = process.cwd()): string | undefined {
  if (configPath !== undefined) return path.resolve(cwd, configPath);
  return [...CONFIG_FILE_NAMES, LANGGRAPH_JSON].map((name) => path.join(cwd, name)).find((candidate) => existsSync(candidate));
}

/** A LangGraph project's `langgraph.json` as a config: each graph a model, the defaults for the rest. */
function fromLangGraphJson(filepath: string, displayPath: string, modules: ModuleLoader): LoadedConfig {
  const project = readLangGraphJson(filepath, displayPath);
  applyLangGraphEnv(project);
  const defaultDescriptions = new Set<string>();
  const graphs: Record<string, Record<string, unknown>> = {};
  for (const [id, graph] of Object.entries(project.graphs)) {
    if (graph.description === undefined) defaultDescriptions.add(id);
    graphs[id] = { graph: graph.reference, description: graph.description ?? defaultDescription(id, graph), ...LANGGRAPH_DEFAULTS };
  }
  try {
    return {
      filepath,
      displayPath,
      config: configSchema.parse(
        {
          graphs,
          ...agentServerSettings(project),
        },
        PARSE_ONCE,
      ),
      modules,
      langgraphJson: { project, defaultDescriptions },
    };
  } catch (error) {
    if (error instanceof z.ZodError) throw new ConfigError(`${displayPath}: ${describeConfigIssue(error)}`, { cause: error });
    throw error;
  }
}

/**
 * Why a config file could not be loaded, in one line that starts with `file:line:column` when
 * the loader said where: TypeScript syntax errors carry a location after their first line,
 * and JSON errors a position in the file.
 */
function loadFailure(error: unknown, filepath: string, displayPath: string): string {
  // The loader's code frame may be coloured; the line printed here never is.
  const message = stripVTControlCharacters(error instanceof Error ? error.message : String(error));
  const location = /:(\d+):(\d+)\s*$/mu.exec(message);
  const reason = message
    .split("\n")
    .map((line) => line.trim())
    // Skip the loader's heading and its code frame (`> 1 | {`, `2 | ...`, `| ^`).
    .find((line) => line !== "" && !line.startsWith("JSON Error") && !/^>?\s*\d*\s*\|/u.test(line) && !line.includes(filepath));
  const what = (reason ?? firstLine(error)).replace(/ while parsing .*$/u, "").replace(/ in JSON at position \d+.*$/u, "");
  // The TypeScript loader (Babel) counts columns from 0; editors count from 1.
  if (location?.[1] !== undefined) return `${displayPath}:${location[1]}:${Number(location[2]) + 1}: could not be loaded: ${what}`;
  const position = /at position (\d+)/u.exec(message)?.[1];
  if (position !== undefined && existsSync(filepath)) {
    const before = readFileSync(filepath, "utf8").slice(0, Number(position));
    const line = before.split("\n").length;
    const column = Number(position) - before.lastIndexOf("\n");
    return `${displayPath}:${line}:${column}: could not be loaded: ${what}`;
  }
  return `${displayPath}: could not be loaded: ${what}`;
}

type AnySchema = { _zod: { def: Record<string, unknown> & { type: string } } };

/** The zod schema at a path of the config schema, through objects, records and wrappers. */
function schemaAt(schema: AnySchema, keys: readonly PropertyKey[]): AnySchema | undefined {
  let current: AnySchema | undefined = schema;
  const unwrap = () => {
    while (current !== undefined && ["default", "prefault", "optional", "nullable"].includes(current._zod.def.type)) {
      current = current._zod.def.innerType as AnySchema;
    }
  };
  unwrap();
  for (const key of keys) {
    if (current === undefined) return undefined;
    const def: Record<string, unknown> & { type: string } = current._zod.def;
    if (def.type === "object") current = (def.shape as Record<string, AnySchema>)[String(key)];
    else if (def.type === "record") current = def.valueType as AnySchema;
    else return undefined;
    unwrap();
  }
  return current;
}

/**
 * The config's first problem as `key.path: what is wrong`. A misspelt key comes first, with a
 * did-you-mean, since it usually causes the other problems (a misspelt \`graphs\` is also a
 * missing one).
 */
function describeConfigIssue(error: z.ZodError): string {
  const unknown = error.issues
    .flatMap((issue) => (issue.code === "unrecognized_keys" ? issue.keys.map((key) => ({ path: issue.path, key: String(key) })) : []))
    .sort((first, second) => first.path.length - second.path.length);
  const described = unknown.map(({ path, key }) => {
    const shape = schemaAt(configSchema as unknown as AnySchema, path)?._zod.def.shape as Record<string, unknown> | undefined;
    return { path, key, hint: didYouMean(key, Object.keys(shape ?? {})) };
  });
  if (described.length === 1) {
    const [{ path, key, hint }] = described as [(typeof described)[number]];
    return `${path.length === 0 ? "" : `${path.map(String).join(".")}: `}unknown key '${key}'${hint}`;
  }
  if (described.length > 1) {
    // Every one of them, so a second run does not find the next.
    const keys = described.map(({ path, key, hint }) => {
      const name = [...path.map(String), key].join(".");
      return `'${name}'${hint === "" ? "" : ` (${hint.slice(2)})`}`;
    });
    return `unknown keys ${keys.slice(0, -1).join(", ")} and ${keys.at(-1)}`;
  }
  return describeFirstIssue(error);
}
