/** The OpenAI error `type` values this service uses. */
export type OpenAIErrorType = "invalid_request_error" | "server_error" | "requests";

export interface ServeErrorOptions {
  param?: string | null;
  cause?: unknown;
}

// A registry symbol, so an error thrown by another copy of this package (a graph module that
// imports the published build while the server runs from source) is still recognised.
const SERVE_ERROR_BRAND = Symbol.for("chat-serve.ServeError");

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
  /** Seconds after which the client may retry, sent as `Retry-After` when set. */
  readonly retryAfterSeconds: number | undefined;

  constructor(message: string, options: ServeErrorOptions & { retryAfterSeconds?: number } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.param = options.param ?? null;
    this.retryAfterSeconds = options.retryAfterSeconds;
    Object.defineProperty(this, SERVE_ERROR_BRAND, { value: true });
  }
}

/**
 * True for chat-serve's own errors only, including one thrown by another copy of this
 * package. An error that merely looks like ours (a provider SDK's error with a `status`, a
 * `code` and a `type`) is not one.
 */
export function isServeError(value: unknown): value is ServeError {
  return value instanceof Error && (value as unknown as Record<symbol, unknown>)[SERVE_ERROR_BRAND] === true;
}
