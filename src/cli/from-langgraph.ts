import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { agentServerSettings } from "../config/define-config.js";
import { defaultDescription, LANGGRAPH_DEFAULTS, LANGGRAPH_JSON, readLangGraphJson } from "../config/langgraph-json.js";
import { ModuleLoader } from "../config/module-loader.js";
import { UserError } from "../errors/developer-errors.js";
import { loadModuleReference } from "../server/module-reference.js";
import { chatServeDependency, placeChatServe, rangeFor, type ScaffoldResult } from "./scaffold.js";

const CONFIG_FILE = "chat-serve.config.ts";

/**
 * `chat-serve init --from langgraph.json`: writes a `chat-serve.config.ts` that imports the
 * graphs the LangGraph project lists (each a model, described by langgraph.json, the compiled
 * graph, or a default), and adds chat-serve to the project's package.json.
 */
export async function initFromLangGraph(dir: string, from: string, force: boolean): Promise<ScaffoldResult> {
  const file = path.resolve(dir, from);
  if (!existsSync(file)) throw new UserError(`cannot find ${from} in ${dir} (looked for ${file})`);
  const project = readLangGraphJson(file, path.relative(process.cwd(), file) || file);
  const configFile = path.join(dir, CONFIG_FILE);
  if (existsSync(configFile) && !force) {
    throw new UserError(`${path.relative(process.cwd(), configFile) || CONFIG_FILE} already exists; pass --force to write over it`);
  }
  const baseDir = path.dirname(file);
  const modules = new ModuleLoader(pathToFileURL(path.join(baseDir, "noop.js")).href);
  const entries: string[] = [];
  for (const [id, graph] of Object.entries(project.graphs)) {
    const reference = `./${path.relative(dir, path.resolve(baseDir, graph.reference)).split(path.sep).join("/")}`;
    const description = graph.description ?? (await ownDescription(graph.reference, baseDir, modules)) ?? defaultDescription(id, graph);
    const key = /^[A-Za-z_$][\w$]*$/u.test(id) ? id : JSON.stringify(id);
    entries.push(
      [
        `    ${key}: {`,
        `      graph: ${JSON.stringify(reference)},`,
        `      description: ${JSON.stringify(description)},`,
        // What the project got with langgraph.json alone (docs/configuration.md says each).
        `      streamableNodeNames: ${JSON.stringify(LANGGRAPH_DEFAULTS.streamableNodeNames)},`,
        `      features: [${LANGGRAPH_DEFAULTS.features.map((feature) => JSON.stringify(feature)).join(", ")}],`,
        `      events: { tools: ${LANGGRAPH_DEFAULTS.events.tools} },`,
        "    },",
      ].join("\n"),
    );
  }
  const settings = agentServerSettings(project);
  const env = project.env === undefined ? [] : envLines(project.env.from, project.env.variables, path.relative(dir, baseDir));
  const text = [
    'import { defineConfig } from "chat-serve";',
    "",
    `// Written by \`chat-serve init --from ${from}\`: the graphs ${from} lists, each served as a model.`,
    "// `npx chat-serve start` serves them; `npx chat-serve models` checks this file without serving.",
    ...env,
    "export default defineConfig({",
    `  server: ${literal({ host: "127.0.0.1", port: 8000, prefix: "/v1", ...(settings.server as object) })},`,
    "  graphs: {",
    ...entries,
    "  },",
    ...authLines(project.auth, dir, baseDir),
    ...projectLines(settings, (reference) => movedReference(reference, dir, baseDir)),
    "});",
    "",
  ].join("\n");
  const result: ScaffoldResult = { dir, written: [], overwritten: [], updated: [] };
  if (existsSync(configFile)) result.overwritten.push(CONFIG_FILE);
  await writeFile(configFile, text);
  result.written.push(CONFIG_FILE);
  await addToPackageJson(dir, result);
  return result;
}

/** A `./file.ts:export` reference relative to langgraph.json's folder, relative to the config's. */
function movedReference(reference: string, dir: string, baseDir: string): string {
  const [file, exportName] = reference.split(":");
  return `./${path
    .relative(dir, path.resolve(baseDir, file ?? ""))
    .split(path.sep)
    .join("/")}${exportName === undefined ? "" : `:${exportName}`}`;
}

/** A value as TypeScript writes it: keys unquoted where they can be. */
function literal(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(literal).join(", ")}]`;
  if (typeof value !== "object" || value === null) return JSON.stringify(value);
  const entries = Object.entries(value).map(
    ([key, item]) => `${/^[A-Za-z_$][\w$]*$/u.test(key) ? key : JSON.stringify(key)}: ${literal(item)}`,
  );
  return entries.length === 0 ? "{}" : `{ ${entries.join(", ")} }`;
}

/** langgraph.json's `http.app`, `store` and `checkpointer.ttl` as the config's keys. */
function projectLines(settings: Record<string, unknown>, moved: (reference: string) => string): string[] {
  const lines: string[] = [];
  const http = settings.http as { app: string } | undefined;
  if (http !== undefined)
    lines.push("  // langgraph.json's http: the project's own routes.", `  http: ${literal({ ...http, app: moved(http.app) })},`);
  const store = settings.graphStore as { index?: { embed: string }; ttl?: object } | undefined;
  if (store !== undefined) {
    const embed = store.index?.embed.startsWith(".") === true ? moved(store.index.embed) : store.index?.embed;
    const index = store.index === undefined ? {} : { index: { ...store.index, embed } };
    lines.push(
      "  // langgraph.json's store: a semantic index, items' time to live.",
      `  graphStore: ${literal({ ...index, ...(store.ttl === undefined ? {} : { ttl: store.ttl }) })},`,
    );
  }
  if (settings.checkpointer !== undefined)
    lines.push("  // langgraph.json's checkpointer.ttl: idle threads swept.", `  checkpointer: ${literal(settings.checkpointer)},`);
  return lines;
}

/** `auth`: the project's LangGraph `Auth`, as langgraph.json's `auth.path` names it. */
function authLines(auth: { path: string; disableStudioAuth: boolean } | undefined, dir: string, baseDir: string): string[] {
  if (auth === undefined) return [];
  const reference = movedReference(auth.path, dir, baseDir);
  const studio = auth.disableStudioAuth ? ", disableStudioAuth: true" : "";
  return [
    `  // langgraph.json's auth: its authenticate says who is calling, its handlers what each sees.`,
    `  auth: { custom: ${JSON.stringify(reference)}${studio} },`,
  ];
}

/** The compiled graph's own `description`, when the module imports here; undefined otherwise. */
async function ownDescription(reference: string, baseDir: string, modules: ModuleLoader): Promise<string | undefined> {
  try {
    const graph = await loadModuleReference(reference, { baseDir, file: LANGGRAPH_JSON, key: "graphs", modules });
    const description = (graph as { description?: unknown }).description;
    return typeof description === "string" && description.trim() !== "" ? description.trim() : undefined;
  } catch {
    // Not installed yet, or it needs its environment: the default description will do.
    return undefined;
  }
}

/** The config's lines that give the graphs langgraph.json's `env` (a `.env` beside the config is read anyway). */
function envLines(from: string, variables: Record<string, string>, relativeDir: string): string[] {
  if (from === LANGGRAPH_JSON) {
    const names = Object.entries(variables).map(([name, value]) => `process.env[${JSON.stringify(name)}] ??= ${JSON.stringify(value)};`);
    return ["", `// ${LANGGRAPH_JSON}'s env; variables already set keep their value.`, ...names, ""];
  }
  const envPath = path.join(relativeDir, from).split(path.sep).join("/");
  if (envPath === ".env")
    return ["// chat-serve reads the .env file of the folder it starts in before this file (variables already set keep their value).", ""];
  return [
    "",
    `// ${LANGGRAPH_JSON}'s env file; variables already set keep their value.`,
    `process.loadEnvFile(new URL(${JSON.stringify(`./${envPath}`)}, import.meta.url));`,
    "",
  ];
}

/** chat-serve as a dependency of the project, and a `serve` script, leaving what is there. */
async function addToPackageJson(dir: string, result: ScaffoldResult): Promise<void> {
  const source = await chatServeDependency();
  const file = path.join(dir, "package.json");
  if (!existsSync(file)) {
    throw new UserError(
      `wrote ${CONFIG_FILE}, but ${dir} has no package.json to add chat-serve to: run 'npm init -y' and 'npm install ${source.kind === "registry" ? "chat-serve" : "<path to chat-serve>"}' there`,
    );
  }
  const manifest = JSON.parse(await readFile(file, "utf8")) as {
    dependencies?: Record<string, string>;
    devDependencies?: Record<string, string>;
    scripts?: Record<string, string>;
  };
  // A project that has chat-serve already (a tarball, a workspace, a version) keeps its own specifier.
  const has = manifest.dependencies?.["chat-serve"] ?? manifest.devDependencies?.["chat-serve"];
  if (has === undefined) manifest.dependencies = { ...manifest.dependencies, "chat-serve": rangeFor(dir, source) };
  manifest.scripts = { serve: "chat-serve start", ...manifest.scripts };
  await writeFile(file, `${JSON.stringify(manifest, null, 2)}\n`);
  result.updated.push("package.json");
  result.written.push("package.json");
  if (has === undefined) await placeChatServe(dir, source, result);
}
