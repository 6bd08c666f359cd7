/** The OpenAI error `type` values this service uses. */
export type OpenAIErrorType = "invalid_request_error" | "server_error";

export interface ServeErrorOptions {
  param?: string | null;
  cause?: unknown;
}

/**
 * Base of every error the service raises on purpose. Each subclass fixes a stable `code`,
 * an HTTP status and an OpenAI error `type`; `http/` turns any of them into the OpenAI error
 * body. Code never matches on message text.
 */
export abstract class ServeError extends Error {
  abstract readonly code: string;
  abstract readonly status: number;
  abstract readonly type: OpenAIErrorType;
  readonly param: string | null;

  constructor(message: string, options: ServeErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.param = options.param ?? null;
  }
}

/** True for any ServeError, including one thrown by another copy of this package. */
export function isServeError(value: unknown): value is ServeError {
  return (
    value instanceof ServeError ||
    (value instanceof Error &&
      typeof (value as Partial<ServeError>).code === "string" &&
      typeof (value as Partial<ServeError>).status === "number" &&
      ((value as Partial<ServeError>).type === "invalid_request_error" ||
        (value as Partial<ServeError>).type === "server_error"))
  );
}
