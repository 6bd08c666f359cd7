import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { LoadedConfig } from "../config/load-config.js";
import { ConfigError } from "../errors/developer-errors.js";
import { firstLine } from "../errors/first-line.js";
import type { UiBundles, UiFile } from "../http/surface.js";

/** esbuild's own account of a failed build: its first error, with where it is. */
function buildProblem(error: unknown): string {
  const first = (error as { errors?: { text?: string; location?: { file?: string; line?: number; column?: number } | null }[] })
    .errors?.[0];
  if (first?.text === undefined) return firstLine(error);
  const at = first.location;
  return at?.file === undefined ? first.text : `${at.file}:${at.line}:${at.column}: ${first.text}`;
}

/**
 * Each graph's generative UI (`ui`, langgraph.json's `ui`), bundled now with LangGraph's own
 * bundler (`@langchain/langgraph-ui`: React and the SDK left to the page, Tailwind CSS built,
 * `ui_config.shared` left out too) and kept in memory, as `langgraphjs dev` builds them at
 * start. A file that does not build stops the start with one line naming the key and esbuild's
 * first error.
 */
export async function uiBundlesFromConfig(loaded: LoadedConfig): Promise<UiBundles | undefined> {
  const { ui, uiConfig } = loaded.config;
  if (ui === undefined || Object.keys(ui).length === 0) return undefined;
  const { build } = await import("@langchain/langgraph-ui");
  const cwd = path.dirname(loaded.filepath);
  const output = await mkdtemp(path.join(tmpdir(), "chat-serve-ui-"));
  const bundles = new Map<string, UiFile[]>();
  try {
    for (const [graphId, file] of Object.entries(ui)) {
      const where = `${loaded.displayPath}: ui.${graphId}`;
      if (path.relative(cwd, path.resolve(cwd, file)).startsWith("..")) {
        throw new ConfigError(`${where}: '${file}' must be inside the project's folder (${cwd})`);
      }
      try {
        await build({ cwd, defs: { [graphId]: file }, config: uiConfig ?? {}, output: path.join(output, graphId) });
      } catch (error) {
        throw new ConfigError(`${where}: '${file}' did not build: ${buildProblem(error)}`, { cause: error });
      }
      const folder = path.join(output, graphId, "public", graphId);
      const names = await readdir(folder).catch(() => []);
      bundles.set(
        graphId,
        await Promise.all(
          names.map(async (basename) => ({ basename, contents: new Uint8Array(await readFile(path.join(folder, basename))) })),
        ),
      );
    }
  } finally {
    await rm(output, { recursive: true, force: true });
  }
  return bundles;
}
