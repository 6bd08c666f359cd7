import { createRequire } from "node:module";
import { Command } from "commander";
import { reportError } from "./output.js";

const { version } = createRequire(import.meta.url)("../../package.json") as { version: string };

/** The `chat-serve` program. Commands load their modules lazily so `--help` stays fast. */
export function buildProgram(): Command {
  const program = new Command("chat-serve")
    .description("Serve LangGraph.js graphs as OpenAI-compatible chat-completions models.")
    .version(version)
    .showHelpAfterError();

  program
    .command("start")
    .description("validate the config, print the model table and serve")
    .option("-c, --config <file>", "config file (default: chat-serve.config.ts in this folder)")
    .option("--host <host>", "host to listen on (default 127.0.0.1)")
    .option("-p, --port <port>", "port to listen on (default 8000)")
    .option("--prefix <prefix>", "URL prefix of the API (default /v1)")
    .option("-w, --watch", "restart when the config or a graph module changes")
    .option("--workers <n>", "processes serving one port (needs a postgres checkpointer and a redis or postgres coordinator)")
    .action(async (options) => {
      if (options.watch === true) {
        const flags = { config: "--config", host: "--host", port: "--port", prefix: "--prefix", workers: "--workers" } as const;
        const args = Object.entries(flags).flatMap(([key, flag]) => (options[key] === undefined ? [] : [flag, String(options[key])]));
        return (await import("./commands/watch.js")).watchCommand(args, options.config);
      }
      return (await import("./commands/start.js")).startCommand(options);
    });

  program
    .command("models")
    .description("validate the config and print the model table without serving")
    .option("-c, --config <file>", "config file (default: chat-serve.config.ts in this folder)")
    .option("--json", "print JSON instead of a table")
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
    .command("init")
    .description("scaffold a runnable chat-serve project")
    .argument("[dir]", "folder to create the project in", ".")
    .option("-t, --template <name>", "template to copy", "default")
    .option("--force", "write into a folder that is not empty, overwriting its files")
    .action(async (dir, options) => (await import("./commands/init.js")).initCommand(dir, options));

  return program;
}

export async function main(argv: string[] = process.argv): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (error) {
    reportError(error);
    process.exitCode = 1;
  }
}
