import chalk from "chalk";
import { ConfigError, RegistrationError, UserError } from "../errors/catalogue.js";
import { isChatServeError } from "../errors/serve-error.js";

function isExpected(error: unknown): error is Error {
  return isChatServeError(error, ConfigError) || isChatServeError(error, RegistrationError) || isChatServeError(error, UserError);
}

/** Prints an error the way the CLI promises: one line for user mistakes, a stack for bugs. */
export function reportError(error: unknown): void {
  if (isExpected(error)) {
    process.stderr.write(`${chalk.red("error")} ${error.message}\n`);
    return;
  }
  process.stderr.write(`${chalk.red("chat-serve crashed; this is a bug, please report it:")}\n`);
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
}

/** A backend URL fit to print: any password replaced. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = "***";
    return parsed.href;
  } catch {
    return url;
  }
}
