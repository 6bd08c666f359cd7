import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, watch } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import chalk from "chalk";
import { CONFIG_FILE_NAMES } from "../../config/load-config.js";

const BIN = fileURLToPath(new URL("../../../bin/chat-serve.js", import.meta.url));
const WATCHED = /\.(?:[cm]?ts|[cm]?js|json)$/u;
const IGNORED = /(?:^|[/\\])(?:node_modules|\.git|dist|coverage)(?:[/\\]|$)/u;
const DEBOUNCE_MS = 150;

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
    child = spawn(process.execPath, [BIN, "start", ...startArgs], { stdio: "inherit" });
    child.on("exit", (code, signal) => {
      if (signal === null && code !== 0) {
        process.stdout.write(
          `${chalk.yellow("waiting")} for a change to ${path.relative(process.cwd(), dir) || "."} before starting again\n`,
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

  const watcher = watch(dir, { recursive: true }, (_event, filename) => {
    if (filename === null || IGNORED.test(filename) || !WATCHED.test(filename)) return;
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
  });

  const shutdown = async () => {
    watcher.close();
    clearTimeout(timer);
    await stopChild();
    process.exit(0);
  };
  process.on("SIGINT", () => void shutdown());
  process.on("SIGTERM", () => void shutdown());
  process.stdout.write(`${chalk.dim(`watching ${dir} for changes`)}\n`);
  launch();
}
