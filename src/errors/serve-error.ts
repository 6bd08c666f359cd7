/** The OpenAI error `type` values this service uses. */
export type OpenAIErrorType = "invalid_request_error" | "server_error" | "requests";

export interface ServeErrorOptions {
  param?: string | null;
  cause?: unknown;
}

// A registry symbol, so an error thrown by another copy of this package (a graph module that
// imports the published build while the server runs from source) is still recognised. Its
// value lists the error's class and every chat-serve class above it.
const ERROR_BRAND = Symbol.for("chat-serve.error");

type ErrorClass = abstract new (...args: never[]) => Error;

/**
 * Base of every error class chat-serve defines (all of them live in `errors/`). Recognise one
 * with `isChatServeError(value, TheClass)`, the one brand check, never by `instanceof` alone
 * or by name.
 */
export abstract class ChatServeError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    const brands: string[] = [];
    for (
      let current: unknown = new.target;
      current !== ChatServeError && typeof current === "function";
      current = Object.getPrototypeOf(current)
    ) {
      brands.push((current as { name: string }).name);
    }
    Object.defineProperty(this, ERROR_BRAND, { value: brands });
  }
}

/** True for an error of the given chat-serve class (or a subclass), from any copy of this package. */
export function isChatServeError<T extends ErrorClass>(value: unknown, errorClass: T): value is InstanceType<T> {
  if (!(value instanceof Error)) return false;
  const brands = (value as unknown as Record<symbol, unknown>)[ERROR_BRAND];
  return Array.isArray(brands) && brands.includes(errorClass.name);
}

/**
 * Base of every error the service raises on purpose. Each subclass fixes a stable `code`,
 * an HTTP status and an OpenAI error `type`; `http/` turns any of them into the OpenAI error
 * body. Code never matches on message text.
 */
export abstract class ServeError extends ChatServeError {
  abstract readonly code: string;
  abstract readonly status: number;
  abstract readonly type: OpenAIErrorType;
  readonly param: string | null;
  /** Seconds after which the client may retry, sent as `Retry-After` when set. */
  readonly retryAfterSeconds: number | undefined;

  constructor(message: string, options: ServeErrorOptions & { retryAfterSeconds?: number } = {}) {
    super(message, options);
    this.param = options.param ?? null;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/**
 * True for chat-serve's own errors only, including one thrown by another copy of this
 * package. An error that merely looks like ours (a provider SDK's error with a `status`, a
 * `code` and a `type`) is not one.
 */
export function isServeError(value: unknown): value is ServeError {
  return isChatServeError(value, ServeError);
}
