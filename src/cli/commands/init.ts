import path from "node:path";
import chalk from "chalk";
import { scaffold } from "../scaffold.js";

export interface InitOptions {
  template: string;
  force?: boolean;
}

/** `chat-serve init [dir]`: scaffolds a runnable project and prints the next steps. */
export async function initCommand(dir: string | undefined, options: InitOptions): Promise<void> {
  const target = dir ?? ".";
  const result = await scaffold(target, options.template, options.force === true);
  const shown = path.isAbsolute(target) ? target : path.relative(process.cwd(), path.resolve(target)) || ".";
  process.stdout.write(`${chalk.green("created")} a chat-serve project in ${shown}\n`);
  for (const file of result.written) {
    const note = result.overwritten.includes(file) ? chalk.yellow(" (overwritten)") : "";
    process.stdout.write(`  ${file}${note}\n`);
  }
  const steps = [shown === "." ? undefined : `cd ${shown}`, "npm install", "npx chat-serve start", "npm test"].filter(Boolean);
  process.stdout.write(`\nnext:\n${steps.map((step) => `  ${chalk.cyan(step)}`).join("\n")}\n`);
}
