import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { copyFile, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { UserError } from "../errors/developer-errors.js";

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

/** Where the scaffolded project gets chat-serve from. */
export type ChatServeSource =
  /** This copy runs from a checkout (or a packed copy of one): a `file:` dependency on it. */
  | { kind: "checkout"; range: string; root: string }
  /** Installed from a tarball: the tarball is copied into the project and depended on. */
  | { kind: "tarball"; range: string; tarball: string; fileName: string }
  /** Installed from the registry: the same version from there. */
  | { kind: "registry"; range: string };

/**
 * How the copy of chat-serve that runs was installed, from the lockfile npm wrote beside it
 * (`node_modules/.package-lock.json`, also written by npx): a `resolved` of `file:….tgz` is a
 * tarball, `file:<folder>` a checkout, anything else the registry.
 */
function installedFrom(root: string): string | undefined {
  const parts = root.split(path.sep);
  const last = parts.lastIndexOf("node_modules");
  const installRoot = parts.slice(0, last).join(path.sep) || path.sep;
  const key = parts.slice(last).join("/");
  for (const lockfile of [path.join(installRoot, "node_modules", ".package-lock.json"), path.join(installRoot, "package-lock.json")]) {
    try {
      const lock = JSON.parse(readFileSync(lockfile, "utf8")) as { packages?: Record<string, { resolved?: string }> };
      const resolved = lock.packages?.[key]?.resolved;
      if (resolved === undefined) continue;
      return resolved.startsWith("file:") ? `file:${path.resolve(installRoot, resolved.slice("file:".length))}` : resolved;
    } catch {
      // No lockfile there, or not one npm wrote: try the next.
    }
  }
  return undefined;
}

function chatServeSource(version: string): ChatServeSource {
  const root = path.dirname(PACKAGE_JSON);
  if (!root.split(path.sep).includes("node_modules")) return { kind: "checkout", range: `file:${root}`, root };
  const resolved = installedFrom(root);
  if (resolved?.startsWith("file:")) {
    const target = resolved.slice("file:".length);
    if (/\.(tgz|tar\.gz)$/u.test(target) && existsSync(target)) {
      const fileName = `chat-serve-${version}.tgz`;
      return { kind: "tarball", range: `file:${fileName}`, tarball: target, fileName };
    }
    if (existsSync(path.join(target, "package.json"))) return { kind: "checkout", range: `file:${target}`, root: target };
  }
  return { kind: "registry", range: `^${version}` };
}

/** The dependency ranges the scaffolded package.json gets: this chat-serve and what it was built with. */
async function versionRanges(): Promise<{ ranges: Record<string, string>; source: ChatServeSource }> {
  const own = JSON.parse(await readFile(PACKAGE_JSON, "utf8")) as {
    version: string;
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
  };
  const source = chatServeSource(own.version);
  return { ranges: { ...own.devDependencies, zod: own.dependencies.zod ?? "*", "chat-serve": source.range }, source };
}

/** The README's sentence on where chat-serve comes from, and how to change it. */
function originText(source: ChatServeSource): string {
  switch (source.kind) {
    case "checkout":
      return `This project gets chat-serve from a checkout of it (a \`file:\` dependency on its folder; \`.npmrc\` installs it as a packed copy). Rebuild that checkout (\`npm run build\` there) and run \`npm install\` here to pick up its changes; to use the published package instead, set \`"chat-serve"\` in package.json to a version range.`;
    case "tarball":
      return `This project gets chat-serve from \`${source.fileName}\`, a packed copy kept in this folder (copied from \`${source.tarball}\`). To upgrade, replace that file and run \`npm install\`; to use the published package instead, set \`"chat-serve"\` in package.json to a version range and delete the file.`;
    case "registry":
      return `This project gets chat-serve from the npm registry (\`${source.range}\`). To use a local checkout or a packed tarball instead, run \`npm install /path/to/chat-serve\` or \`npm install ./chat-serve-x.y.z.tgz\`.`;
  }
}

export interface ScaffoldResult {
  dir: string;
  written: string[];
  /** Files that were there and were replaced. */
  overwritten: string[];
  /** Files that were there and had something added (package.json's dependency, a line of .npmrc). */
  updated: string[];
}

/**
 * The dependency range a project in `dir` gets: a checkout is named by its path relative to the
 * project, so package.json holds no absolute path of this machine.
 */
export function rangeFor(dir: string, source: ChatServeSource): string {
  if (source.kind !== "checkout") return source.range;
  const relative = path.relative(path.resolve(dir), source.root).split(path.sep).join("/") || ".";
  return `file:${relative.startsWith(".") ? relative : `./${relative}`}`;
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
  const result: ScaffoldResult = { dir, written: [], overwritten: [], updated: [] };
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
        if (deps["chat-serve"] !== undefined) deps["chat-serve"] = rangeFor(dir, chatServe);
      }
      await writeFile(destination, `${JSON.stringify(manifest, null, 2)}\n`);
    } else if (file === "README.md") {
      const readme = (await readFile(path.join(source, file), "utf8"))
        .replaceAll("{{name}}", name)
        .replaceAll("{{chat-serve-source}}", originText(chatServe));
      await writeFile(destination, readme);
    } else {
      await copyFile(path.join(source, file), destination);
    }
    result.written.push(target);
  }
  await placeChatServe(dir, chatServe, result);
  return result;
}

/** Where the running chat-serve came from, as a dependency range for a project's package.json. */
export async function chatServeDependency(): Promise<ChatServeSource> {
  return (await versionRanges()).source;
}

/**
 * What a project needs beside its package.json to install the running chat-serve: the tarball
 * it came from, or (for a checkout) an `.npmrc` that installs it as a packed copy.
 */
export async function placeChatServe(dir: string, chatServe: ChatServeSource, result: ScaffoldResult): Promise<void> {
  if (chatServe.kind === "tarball") {
    const destination = path.join(dir, chatServe.fileName);
    if (existsSync(destination)) result.overwritten.push(chatServe.fileName);
    await copyFile(chatServe.tarball, destination);
    result.written.push(chatServe.fileName);
  }
  if (chatServe.kind === "checkout") {
    // A linked checkout would bring its own copies of LangGraph and LangChain; a packed copy shares the project's.
    const npmrc = path.join(dir, ".npmrc");
    const line = "install-links=true";
    const existing = existsSync(npmrc) ? await readFile(npmrc, "utf8") : undefined;
    if (existing?.split("\n").includes(line)) return;
    await writeFile(npmrc, existing === undefined ? `${line}\n` : `${existing.replace(/\n?$/u, "\n")}${line}\n`);
    if (existing !== undefined) result.updated.push(".npmrc");
    result.written.push(".npmrc");
  }
}
