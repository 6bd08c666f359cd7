import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { type Dirent, existsSync, type FSWatcher, readdirSync, statSync, watch } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import chalk from "chalk";
import { CONFIG_FILE_NAMES } from "../../config/load-config.js";
import { WATCHED_CHILD, whenParentExits } from "../signals.js";

const BIN = fileURLToPath(new URL("../../../bin/chat-serve.js", import.meta.url));
const WATCHED = /\.(?:[cm]?ts|tsx|[cm]?js|jsx|json|css)$/u;
const IGNORED = /(?:^|[/\\])(?:node_modules|\.git|dist|coverage)(?:[/\\]|$)/u;
const DEBOUNCE_MS = 150;

/**
 * Watches every folder of a tree, one watcher per folder, and the folders created later.
 * Folders, not files: an editor's atomic save (write a temporary file, rename it over the
 * original, as vim, sed -i and JetBrains do) replaces the file, and a watcher on the old file
 * would go deaf; its folder sees every save. (Node 20's recursive watch on Linux watches files.)
 */
function watchTree(root: string, onChange: (relative: string) => void): Map<string, FSWatcher> {
  const watchers = new Map<string, FSWatcher>();
  const add = (folder: string) => {
    if (watchers.has(folder) || IGNORED.test(path.relative(root, folder))) return;
    let watcher: FSWatcher;
    try {
      watcher = watch(folder, (_event, name) => {
        if (name === null) return;
        const full = path.join(folder, name);
        // The entry may be gone already (an editor's temporary file, renamed away).
        if (statSync(full, { throwIfNoEntry: false })?.isDirectory() === true) add(full);
        onChange(path.relative(root, full));
      });
    } catch {
      return;
    }
    watcher.on("error", () => {
      watcher.close();
      watchers.delete(folder);
    });
    watchers.set(folder, watcher);
    let entries: Dirent[] = [];
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch {
      // Removed while being added: its parent's watcher reports it.
    }
    for (const entry of entries) {
      if (entry.isDirectory()) add(path.join(folder, entry.name));
    }
  };
  add(root);
  return watchers;
}

/** The folder to watch: the config file's, where the graph modules usually live too. */
function projectDir(configPath: string | undefined): string {
  if (configPath !== undefined) return path.dirname(path.resolve(configPath));
  const found = CONFIG_FILE_NAMES.map((name) => path.resolve(name)).find((file) => existsSync(file));
  return found === undefined ? process.cwd() : path.dirname(found);
}

/**
 * `chat-serve start --watch`: runs `chat-serve start` in a child process and restarts it when
 * a source file of the project changes. A start that fails (a config mistake) is reported and
 * retried on the next change.
 */
export async function watchCommand(startArgs: string[], configPath: string | undefined): Promise<void> {
  const dir = projectDir(configPath);
  let child: ChildProcess | undefined;
  let timer: NodeJS.Timeout | undefined;
  let changed = new Set<string>();
  let restarting = Promise.resolve();

  const launch = () => {
    // The child is stopped on every change: its shutdown line would only repeat the restart's.
    child = spawn(process.execPath, [BIN, "start", ...startArgs], { stdio: "inherit", env: { ...process.env, [WATCHED_CHILD]: "1" } });
    child.on("exit", (code, signal) => {
      if (signal === null && code !== 0) {
        process.stdout.write(
          `${chalk.yellow("waiting")} for a change in ${path.relative(process.cwd(), dir) || `this folder (${dir})`} before starting again\n`,
        );
      }
    });
  };
  const stopChild = async () => {
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, "exit");
    child.kill("SIGTERM");
    await exited;
  };

  const onChange = (filename: string) => {
    if (IGNORED.test(filename) || !WATCHED.test(filename)) return;
    changed.add(filename);
    clearTimeout(timer);
    timer = setTimeout(() => {
      const files = [...changed].join(", ");
      changed = new Set();
      restarting = restarting.then(async () => {
        process.stdout.write(`\n${chalk.cyan("restarting")} ${chalk.dim(`(${files} changed)`)}\n`);
        await stopChild();
        launch();
      });
    }, DEBOUNCE_MS);
  };
  const watchers = watchTree(dir, onChange);
  const shutdown = async () => {
    for (const watcher of watchers.values()) watcher.close();
    clearTimeout(timer);
    await stopChild();
    process.exit(0);
  };
  // The server never outlives its watcher, however the watcher ends.
  process.on("exit", () => {
    if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
  });
  process.on("SIGINT", () => void shutdown());
  process.on("SIGTERM", () => void shutdown());
  // Started by npm (`npm run dev`), whose `sh -c` does not pass its SIGTERM on.
  whenParentExits(() => void shutdown());
  process.stdout.write(`${chalk.dim(`watching ${dir} for changes`)}\n`);
  launch();
}
