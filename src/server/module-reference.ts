import { existsSync } from "node:fs";
import path from "node:path";
import { errorLocation, messageWithoutLocation } from "../config/error-location.js";
import { applyLangGraphEnv, parseLangGraphReference, readLangGraphJson } from "../config/langgraph-json.js";
import type { ModuleLoader } from "../config/module-loader.js";
import { ConfigError } from "../errors/developer-errors.js";
import { firstLine } from "../errors/first-line.js";
import { rememberGraphOrigin } from "../registry/graph-origin.js";
import { didYouMean } from "../util/did-you-mean.js";

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/u;

/** Splits `"./graphs/echo.ts:graph"` into a path and an export name (`default` when absent). */
function parseModuleReference(reference: string): { modulePath: string; exportName: string } {
  const colon = reference.lastIndexOf(":");
  const candidate = colon > 0 ? reference.slice(colon + 1) : "";
  if (colon > 0 && IDENTIFIER.test(candidate)) {
    return { modulePath: reference.slice(0, colon), exportName: candidate };
  }
  return { modulePath: reference, exportName: "default" };
}

/**
 * Loads the export a config value refers to. `key` is the dotted config key and `file` the
 * config file's display path, so every failure is one line naming both.
 */
export async function loadModuleReference(
  reference: string,
  options: { baseDir: string; file: string; key: string; modules: ModuleLoader },
): Promise<unknown> {
  const where = `${options.file}: ${options.key}`;
  const langgraph = parseLangGraphReference(reference);
  if (langgraph !== undefined) {
    // `./langgraph.json:agent`: the graph that file lists under that id (its env applied first).
    const file = path.resolve(options.baseDir, langgraph.file);
    if (!existsSync(file)) throw new ConfigError(`${where}: cannot find '${langgraph.file}' (looked for ${file})`);
    const project = readLangGraphJson(file, langgraph.file);
    const graph = project.graphs[langgraph.id];
    if (graph === undefined) {
      const ids = Object.keys(project.graphs);
      throw new ConfigError(
        `${where}: ${langgraph.file} lists no graph '${langgraph.id}'${didYouMean(langgraph.id, ids)} (it lists: ${ids.join(", ")})`,
      );
    }
    applyLangGraphEnv(project);
    return loadModuleReference(graph.reference, { ...options, baseDir: path.dirname(file) });
  }
  const { modulePath, exportName } = parseModuleReference(reference);
  const absolute = path.resolve(options.baseDir, modulePath);
  if (!existsSync(absolute)) {
    throw new ConfigError(`${where}: cannot find module '${modulePath}' (looked for ${absolute})`);
  }
  let loaded: Record<string, unknown>;
  try {
    loaded = await options.modules.load(absolute);
  } catch (error) {
    // Where it failed (a syntax error's place, or the line that threw), so the editor can go there.
    const at = errorLocation(error, options.baseDir);
    const reason = at === undefined ? firstLine(error) : messageWithoutLocation(error);
    throw new ConfigError(`${where}: importing '${modulePath}' failed${at === undefined ? "" : ` at ${at}`}: ${reason}`, { cause: error });
  }
  if (!(exportName in loaded) || loaded[exportName] === undefined) {
    const available = Object.keys(loaded).filter((name) => name !== "__esModule");
    throw new ConfigError(`${where}: '${modulePath}' has no export '${exportName}' (it exports: ${available.join(", ") || "nothing"})`);
  }
  const value = loaded[exportName];
  rememberGraphOrigin(value, { sourceFile: absolute, exportSymbol: exportName });
  return value;
}
