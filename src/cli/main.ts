import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import chalk from "chalk";
import type { Command as CommandClass } from "commander";
import { reportError } from "./output.js";

const require = createRequire(import.meta.url);
const { version } = require("../../package.json") as { version: string };
// commander by `require`: imported, its CommonJS modules would go through node's ESM lexer (see
// "Start-up" in docs/development.md).
const { Command } = require("commander") as { Command: typeof CommandClass };

const ENVIRONMENT_HELP = `
Environment (a flag beats the environment, which beats the config file; a .env file in the
working directory is read first, and variables already set win over it):
  PORT, HOST                  where \`start\` listens
  LOG_LEVEL                   fatal, error, warn, info (default), debug, trace or silent
  LOG_FORMAT=json             JSON log lines even in a terminal
  SVC_CHAT_API_PREFIX         URL prefix (default /v1)
  SVC_CHAT_API_DOCS_ENABLED   serve the API docs (true or false)
  SVC_ENABLE_TRACING          Langfuse tracing, with TRACING_PUBLIC_KEY, TRACING_SECRET_KEY
                              and TRACING_BASE_URL`;

/** The commands that load the project's graphs (and so its LangGraph.js). */
const GRAPH_COMMANDS = new Set(["start", "worker", "models", "schema"]);

/** Reads `.env` from the working directory; variables already in the environment win. */
function loadDotEnv(): void {
  const file = path.resolve(".env");
  if (existsSync(file)) process.loadEnvFile(file);
}

/** The `chat-serve` program. Commands load their modules lazily so `--help` stays fast. */
export function buildProgram(): CommandClass {
  const program = new Command("chat-serve")
    .description("Serve LangGraph.js graphs as OpenAI-compatible models (chat completions and the Responses API).")
    .version(version)
    .showHelpAfterError()
    .addHelpText("after", ENVIRONMENT_HELP);

  // The commands that load a project's graphs check its LangGraph.js first, before any of it loads.
  program.hook("preAction", async (_program, action) => {
    if (!GRAPH_COMMANDS.has(action.name())) return;
    const config = (action.opts() as { config?: unknown }).config;
    const dir = typeof config === "string" ? path.dirname(path.resolve(config)) : process.cwd();
    const warning = (await import("./langgraph-floor.js")).checkLangGraphVersions(dir);
    if (warning !== undefined) process.stderr.write(`${chalk.yellow("warning")} ${warning}\n`);
  });

  program
    .command("start")
    .description("validate the config, print the model table and serve")
    .option("-c, --config <file>", "config file (default: chat-serve.config.ts in this folder, else langgraph.json)")
    .option("--host <host>", "host to listen on (default 127.0.0.1)")
    .option("-p, --port <port>", "port to listen on (default 8000)")
    .option("--prefix <prefix>", "URL prefix of the API (default /v1)")
    .option("-w, --watch", "restart when the config or a graph module changes")
    .option(
      "--workers <n>",
      "processes serving one port (graphs with interrupts or threads need a postgres checkpointer and a redis or postgres coordinator)",
    )
    .option("--log-level <level>", "fatal, error, warn, info (default), debug, trace or silent")
    .option("-q, --quiet", "no log line per request")
    .action(async (options) => {
      if (options.watch === true) {
        const flags = {
          config: "--config",
          host: "--host",
          port: "--port",
          prefix: "--prefix",
          workers: "--workers",
          logLevel: "--log-level",
        } as const;
        const args = Object.entries(flags).flatMap(([key, flag]) => (options[key] === undefined ? [] : [flag, String(options[key])]));
        if (options.quiet === true) args.push("--quiet");
        return (await import("./commands/watch.js")).watchCommand(args, options.config);
      }
      return (await import("./commands/start.js")).startCommand(options);
    });

  program
    .command("worker")
    .description("run background responses from the shared queue, with no HTTP API (needs a redis coordinator and a postgres store)")
    .option("-c, --config <file>", "config file (default: chat-serve.config.ts in this folder)")
    .option("--concurrency <n>", "background runs at once (default: background.concurrency, or 4)")
    .option("--log-level <level>", "fatal, error, warn, info (default), debug, trace or silent")
    .action(async (options) => (await import("./commands/worker.js")).workerCommand(options));

  program
    .command("models")
    .description("validate the config and print the model table without serving")
    .option("-c, --config <file>", "config file (default: chat-serve.config.ts in this folder)")
    .option("--json", "print JSON instead of a table")
    .option("--mermaid <model>", "print the model's graph as LangGraph's Mermaid drawing instead")
    .action(async (options) => (await import("./commands/models.js")).modelsCommand(options));

  program
    .command("schema")
    .description("print the client-settings descriptor of one model as JSON")
    .argument("<model>", "a model ID from the config")
    .option("-c, --config <file>", "config file (default: chat-serve.config.ts in this folder)")
    .action(async (model, options) => (await import("./commands/schema.js")).schemaCommand(model, options));

  program
    .command("purge-pending")
    .description("delete pending interrupt checkpoints idle for longer than a duration")
    .requiredOption("--older-than <duration>", "idle time, e.g. 90m, 12h, 7d")
    .option("--dry-run", "list what would be removed without removing it")
    .option("--json", "print JSON instead of a table")
    .option("-c, --config <file>", "config file (default: chat-serve.config.ts in this folder)")
    .action(async (options) => (await import("./commands/purge-pending.js")).purgePendingCommand(options));

  program
    .command("responses")
    .description("manage stored responses, conversations and chat sessions")
    .addCommand(
      new Command("purge")
        .description("delete stored responses, conversations and chat sessions unused for longer than a duration")
        .requiredOption("--older-than <duration>", "time since last use, e.g. 12h, 7d, 30d")
        .option("--dry-run", "count what would be deleted without deleting it")
        .option("--json", "print JSON instead of a sentence")
        .option("-c, --config <file>", "config file (default: chat-serve.config.ts in this folder)")
        .action(async (options) => (await import("./commands/responses.js")).responsesPurgeCommand(options)),
    )
    .addCommand(
      new Command("list")
        .description("list stored responses of every tenant, newest first (--status in_progress: the background runs going on)")
        .option("--status <status>", "only this status: queued, in_progress, completed, incomplete, failed or cancelled")
        .option("--limit <n>", "at most this many (default 50)")
        .option("--json", "print JSON instead of a table")
        .option("-c, --config <file>", "config file (default: chat-serve.config.ts in this folder)")
        .action(async (options) => (await import("./commands/responses.js")).responsesListCommand(options)),
    );

  program
    .command("pending")
    .description("list the pending interrupt runs: model, run id, tenant scope, created, last activity")
    .option("--older-than <duration>", "only runs idle for longer than this, e.g. 90m, 12h, 7d")
    .option("--json", "print JSON instead of a table")
    .option("-c, --config <file>", "config file (default: chat-serve.config.ts in this folder)")
    .action(async (options) => (await import("./commands/pending.js")).pendingCommand(options));

  program
    .command("init")
    .description("scaffold a runnable chat-serve project, or configure a LangGraph project (--from langgraph.json)")
    .argument("[dir]", "folder to create the project in", ".")
    .option("-t, --template <name>", "template to copy", "default")
    .option("--from <file>", "write a chat-serve.config.ts for the graphs a LangGraph project's langgraph.json lists")
    .option("--force", "write into a folder that is not empty, overwriting its files")
    .action(async (dir, options) => (await import("./commands/init.js")).initCommand(dir, options));

  return program;
}

/** `--log-level debug|trace` (or `LOG_LEVEL`): an error's cause is printed with its stack. */
function wantsStack(argv: readonly string[]): boolean {
  const flag = argv.indexOf("--log-level");
  const level = (flag >= 0 ? argv[flag + 1] : argv.find((arg) => arg.startsWith("--log-level="))?.split("=")[1]) ?? process.env.LOG_LEVEL;
  return level === "debug" || level === "trace";
}

export async function main(argv: string[] = process.argv): Promise<void> {
  try {
    loadDotEnv();
    // https://no-color.org: a non-empty NO_COLOR turns colour off, even where FORCE_COLOR is set.
    if ((process.env.NO_COLOR ?? "") !== "") chalk.level = 0;
    await buildProgram().parseAsync(argv);
  } catch (error) {
    reportError(error, { stack: wantsStack(argv) });
    process.exitCode = 1;
  }
}
