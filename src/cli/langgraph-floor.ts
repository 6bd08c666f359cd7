import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { UserError } from "../errors/developer-errors.js";
import { commandsOf, packageManagerOf } from "./package-manager.js";

// The LangGraph.js a project runs its graphs on, checked before chat-serve loads any of it: a
// project pinned below what chat-serve supports (the templates of LangGraph 0.2 and LangChain
// core 0.3) is told in one line what it has, what it needs and how to install it, instead of a
// crash deep in an import.

/** The packages whose version decides whether a project's graphs can be served, and the fewest chat-serve supports. */
const CHECKED = ["@langchain/langgraph", "@langchain/core"] as const;

/** What chat-serve supports: the floor of its own peer dependency ranges (`^1.7.0` → 1.7.0). */
function floors(): Record<string, string> {
  const manifest = createRequire(import.meta.url)("../../package.json") as { peerDependencies: Record<string, string> };
  return Object.fromEntries(CHECKED.map((name) => [name, (manifest.peerDependencies[name] ?? "0.0.0").replace(/^[\^~>=]+/u, "")]));
}

/** A version's numbers, for comparing (a pre-release counts as its release). */
function numbers(version: string): number[] {
  return version
    .split("-")[0]!
    .split(".")
    .map((part) => Number.parseInt(part, 10) || 0);
}

function below(version: string, floor: string): boolean {
  const [a, b] = [numbers(version), numbers(floor)];
  for (let index = 0; index < 3; index += 1) {
    if ((a[index] ?? 0) !== (b[index] ?? 0)) return (a[index] ?? 0) < (b[index] ?? 0);
  }
  return false;
}

/** Where a package resolves from `from` (a file), and its version; undefined when it does not. */
function installed(name: string, from: string): { version: string; dir: string } | undefined {
  const require = createRequire(from);
  let manifest: string | undefined;
  try {
    manifest = require.resolve(`${name}/package.json`);
  } catch {
    // A package whose exports leave out package.json: from its entry, up to its own manifest.
    try {
      for (let dir = path.dirname(require.resolve(name)); dir !== path.dirname(dir); dir = path.dirname(dir)) {
        const candidate = path.join(dir, "package.json");
        if (existsSync(candidate) && (JSON.parse(readFileSync(candidate, "utf8")) as { name?: string }).name === name) {
          manifest = candidate;
          break;
        }
      }
    } catch {
      return undefined;
    }
  }
  if (manifest === undefined) return undefined;
  const { version } = JSON.parse(readFileSync(manifest, "utf8")) as { version: string };
  return { version, dir: path.dirname(manifest) };
}

/**
 * Stops, in one line, when the project in `projectDir` resolves a LangGraph.js or LangChain core
 * below what chat-serve supports (or chat-serve itself would load one); answers a warning when
 * the project and chat-serve load two different copies.
 */
export function checkLangGraphVersions(projectDir: string): string | undefined {
  // yarn 2+'s Plug'n'Play has no node_modules, where a project's graphs and their imports are read from.
  if ((process.versions as { pnp?: string }).pnp !== undefined) {
    throw new UserError(
      "this project's packages are installed by yarn's Plug'n'Play, from which chat-serve cannot load a project's graphs: add `nodeLinker: node-modules` to .yarnrc.yml and run `yarn install`",
    );
  }
  const wanted = floors();
  const fromProject = path.join(path.resolve(projectDir), "noop.js");
  const old: string[] = [];
  const twice: string[] = [];
  for (const name of CHECKED) {
    const project = installed(name, fromProject);
    const own = installed(name, fileURLToPath(import.meta.url));
    const used = project ?? own;
    if (used !== undefined && below(used.version, wanted[name]!)) old.push(`${name} ${used.version}`);
    if (project !== undefined && own !== undefined && project.dir !== own.dir && project.version !== own.version) {
      twice.push(`${name} ${project.version} (the project's) and ${own.version} (chat-serve's)`);
    }
  }
  if (old.length > 0) {
    const install = commandsOf(packageManagerOf(projectDir)).add(CHECKED.map((name) => `${name}@^${wanted[name]}`));
    throw new UserError(
      `this project has ${old.join(" and ")}; chat-serve serves graphs of ${CHECKED.map((name) => `${name} ${wanted[name]} or newer`).join(" and ")}: run \`${install}\` (LangGraph.js 0.x graphs are not served)`,
    );
  }
  return twice.length === 0
    ? undefined
    : `two copies of LangGraph.js are installed: ${twice.join(", ")}; graphs are served by chat-serve's, so install one version (\`${commandsOf(packageManagerOf(projectDir)).install}\` after aligning the versions in package.json)`;
}
