import { ChatServeError } from "./serve-error.js";

// Mistakes in what a developer wrote (the config file, the command line, a graph's registration,
// a settings model, a citation's indices): raised before or beside a request's answer, never
// sent as a wire error, and printed by the CLI as one line. The wire's error table is catalogue.ts.

/**
 * The registry refused a graph configuration. Raised at registration, never during a request;
 * the CLI prints it as one line naming the model.
 */
export class RegistrationError extends ChatServeError {
  readonly model: string | undefined;
  /** The dotted key of the graph configuration at fault, when one is. */
  readonly key: string | undefined;
  /** What is wrong, without the model name or key. */
  readonly reason: string;
  constructor(reason: string, model?: string, options?: { cause?: unknown; key?: string }) {
    const subject = [model === undefined ? undefined : `model '${model}'`, options?.key].filter(Boolean).join(": ");
    super(subject === "" ? reason : `${subject}: ${reason}`, options);
    this.model = model;
    this.key = options?.key;
    this.reason = reason;
  }
}

/** The config file or an environment setting is invalid. Names the file and the key. */
export class ConfigError extends ChatServeError {}

/** A mistake on the command line the user can fix: printed as one line, exit code 1, no stack. */
export class UserError extends ChatServeError {}

/** A settings model that cannot be registered, raised by `ClientSettings.inspect()`. */
export class ClientSettingsDefinitionError extends ChatServeError {}

/** A citation whose indices do not fit its text. */
export class CitationIndexError extends ChatServeError {}
