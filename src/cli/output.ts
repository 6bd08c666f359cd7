import chalk from "chalk";
import { ConfigError, RegistrationError } from "../errors/catalogue.js";

/** A mistake the user can fix: printed as one red line, exit code 1, no stack. */
export class UserError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UserError";
  }
}

function isExpected(error: unknown): error is Error {
  return error instanceof ConfigError || error instanceof RegistrationError || error instanceof UserError;
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
