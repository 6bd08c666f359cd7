import path from "node:path";
import chalk from "chalk";
import { initFromLangGraph } from "../from-langgraph.js";
import { commandsOf, packageManagerOf } from "../package-manager.js";
import { scaffold } from "../scaffold.js";

export interface InitOptions {
  template: string;
  force?: boolean;
  /** A LangGraph project's `langgraph.json`: write a config for its graphs instead of a template. */
  from?: string;
}

/**
 * `chat-serve init [dir]`: scaffolds a runnable project (or, with `--from langgraph.json`,
 * configures an existing LangGraph project) and prints the next steps.
 */
export async function initCommand(dir: string | undefined, options: InitOptions): Promise<void> {
  const target = dir ?? ".";
  const shown = path.isAbsolute(target) ? target : path.relative(process.cwd(), path.resolve(target)) || ".";
  const fromLangGraph = options.from !== undefined;
  const result =
    options.from === undefined
      ? await scaffold(target, options.template, options.force === true)
      : await initFromLangGraph(target, options.from, options.force === true);
  process.stdout.write(
    fromLangGraph
      ? `${chalk.green("configured")} the LangGraph project in ${shown} for chat-serve\n`
      : `${chalk.green("created")} a chat-serve project in ${shown}\n`,
  );
  for (const file of result.written) {
    const note = result.overwritten.includes(file)
      ? chalk.yellow(" (overwritten)")
      : result.updated.includes(file)
        ? chalk.dim(" (added to)")
        : "";
    process.stdout.write(`  ${file}${note}\n`);
  }
  // The project's own package manager (its packageManager field, its lockfile) in the next steps.
  const commands = commandsOf(packageManagerOf(target));
  const steps = [
    shown === "." ? undefined : `cd ${shown}`,
    commands.install,
    commands.exec("chat-serve start"),
    fromLangGraph ? undefined : commands.run("test"),
  ].filter(Boolean);
  process.stdout.write(`\nnext:\n${steps.map((step) => `  ${chalk.cyan(step)}`).join("\n")}\n`);
}
