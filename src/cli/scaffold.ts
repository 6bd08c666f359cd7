import { existsSync, readdirSync, statSync } from "node:fs";
import { copyFile, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { UserError } from "../errors/catalogue.js";

const TEMPLATES_DIR = fileURLToPath(new URL("../../templates/", import.meta.url));
const PACKAGE_JSON = fileURLToPath(new URL("../../package.json", import.meta.url));

/** Files stored under another name so npm publishing and git leave them alone. */
const RENAMED: Record<string, string> = { _gitignore: ".gitignore", _npmrc: ".npmrc" };

function templateNames(): string[] {
  return readdirSync(TEMPLATES_DIR).filter((name) => statSync(path.join(TEMPLATES_DIR, name)).isDirectory());
}

async function listFiles(dir: string, prefix = ""): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const relative = path.join(prefix, entry.name);
    if (entry.isDirectory()) files.push(...(await listFiles(path.join(dir, entry.name), relative)));
    else files.push(relative);
  }
  return files.sort();
}

/**
 * Where the scaffolded project gets chat-serve from: this very copy when it runs from a
 * checkout (a `file:` dependency, installed as a packed copy so the project's LangGraph is
 * the one chat-serve uses), the registry's same version when it runs as an installed package.
 */
function chatServeSource(version: string): { range: string; fromCheckout: boolean; root: string } {
  const root = path.dirname(PACKAGE_JSON);
  const fromCheckout = !root.split(path.sep).includes("node_modules");
  return { range: fromCheckout ? `file:${root}` : `^${version}`, fromCheckout, root };
}

/** The dependency ranges the scaffolded package.json gets: this chat-serve and what it was built with. */
async function versionRanges(): Promise<{ ranges: Record<string, string>; source: ReturnType<typeof chatServeSource> }> {
  const own = JSON.parse(await readFile(PACKAGE_JSON, "utf8")) as {
    version: string;
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
  };
  const source = chatServeSource(own.version);
  return { ranges: { ...own.devDependencies, zod: own.dependencies.zod ?? "*", "chat-serve": source.range }, source };
}

export interface ScaffoldResult {
  dir: string;
  written: string[];
  overwritten: string[];
}

/**
 * Copies a template into `dir`: `_gitignore` becomes `.gitignore`, the package is named after
 * the folder and its dependency ranges are filled in. Refuses a non-empty folder unless
 * `force`, and reports every file it overwrote.
 */
export async function scaffold(dir: string, template: string, force: boolean): Promise<ScaffoldResult> {
  const available = templateNames();
  if (!available.includes(template)) {
    throw new UserError(`unknown template '${template}'; available: ${available.join(", ")}`);
  }
  if (existsSync(dir) && !statSync(dir).isDirectory()) throw new UserError(`${dir} exists and is not a folder`);
  if (existsSync(dir) && readdirSync(dir).length > 0 && !force) {
    throw new UserError(`${dir} is not empty; pick an empty folder, or pass --force to write over its files`);
  }
  const source = path.join(TEMPLATES_DIR, template);
  const name =
    path
      .basename(path.resolve(dir))
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/gu, "-") || "chat-serve-app";
  const { ranges, source: chatServe } = await versionRanges();
  const result: ScaffoldResult = { dir, written: [], overwritten: [] };
  for (const file of await listFiles(source)) {
    const target = path.join(path.dirname(file), RENAMED[path.basename(file)] ?? path.basename(file));
    const destination = path.join(dir, target);
    await mkdir(path.dirname(destination), { recursive: true });
    if (existsSync(destination)) result.overwritten.push(target);
    if (file === "package.json") {
      const manifest = JSON.parse(await readFile(path.join(source, file), "utf8")) as Record<string, unknown>;
      manifest.name = name;
      for (const field of ["dependencies", "devDependencies"] as const) {
        const deps = manifest[field] as Record<string, string>;
        for (const dependency of Object.keys(deps)) deps[dependency] = ranges[dependency] ?? deps[dependency]!;
      }
      await writeFile(destination, `${JSON.stringify(manifest, null, 2)}\n`);
    } else if (file === "README.md") {
      const origin = chatServe.fromCheckout
        ? `This project gets chat-serve from the checkout at \`${chatServe.root}\` (a \`file:\` dependency; \`.npmrc\` installs it as a packed copy). Rebuild that checkout (\`npm run build\` there) and run \`npm install\` here to pick up its changes; to use the published package instead, set \`"chat-serve"\` in package.json to a version range.`
        : `This project gets chat-serve from the npm registry (\`${chatServe.range}\`). To use a local checkout or a packed tarball instead, run \`npm install /path/to/chat-serve\` or \`npm install ./chat-serve-x.y.z.tgz\`.`;
      const readme = (await readFile(path.join(source, file), "utf8"))
        .replaceAll("{{name}}", name)
        .replaceAll("{{chat-serve-source}}", origin);
      await writeFile(destination, readme);
    } else {
      await copyFile(path.join(source, file), destination);
    }
    result.written.push(target);
  }
  if (chatServe.fromCheckout) {
    // A linked checkout would bring its own copies of LangGraph and LangChain; a packed copy shares the project's.
    const npmrc = path.join(dir, ".npmrc");
    if (existsSync(npmrc)) result.overwritten.push(".npmrc");
    await writeFile(npmrc, "install-links=true\n");
    result.written.push(".npmrc");
  }
  return result;
}
