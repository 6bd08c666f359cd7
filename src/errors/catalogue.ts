import { ChatServeError, ServeError, type ServeErrorOptions } from "./serve-error.js";

// One class per condition of the error table (CONTRACT 4). Client errors carry a `param`
// naming the offending field where there is one.

abstract class ClientError extends ServeError {
  readonly type = "invalid_request_error" as const;
}

abstract class ServerError extends ServeError {
  readonly type = "server_error" as const;
}

/** The request body, or one of its fields, is not valid. */
export class InvalidRequestError extends ClientError {
  readonly status = 400;
  readonly code: string;
  constructor(message: string, options: ServeErrorOptions & { code?: string } = {}) {
    super(message, options);
    this.code = options.code ?? "invalid_value";
  }
}

/** A top-level request field that the chat-completions API does not define. */
export class UnknownParameterError extends ClientError {
  readonly status = 400;
  readonly code = "unknown_parameter";
  constructor(name: string) {
    super(`Unrecognized request argument supplied: ${name}.`, { param: name });
  }
}

/** A deprecated OpenAI field that this service refuses on purpose. */
export class UnsupportedParameterError extends ClientError {
  readonly status = 400;
  readonly code = "unsupported_parameter";
}

/** A message lacks a field its role requires. */
export class InvalidChatMessageError extends ClientError {
  readonly status = 400;
  readonly code = "invalid_chat_message";
}

/** The requested model is not in the registry. */
/** How much of a name from a request an error message repeats (and looks for a did-you-mean for). */
export const MAX_ECHOED_NAME = 100;

export class GraphNotFoundError extends ClientError {
  readonly status = 404;
  readonly code = "model_not_found";
  readonly model: string;
  /** `known`: the models served, named in the message with a did-you-mean when one is close. */
  constructor(model: string, known: readonly string[] = [], suggestion = "") {
    const list = known.length === 0 ? "" : ` The models here: ${known.slice(0, 20).join(", ")}${known.length > 20 ? ", …" : ""}.`;
    // The name comes from the request: a long one is not echoed whole.
    const shown = model.length > MAX_ECHOED_NAME ? `'${model.slice(0, MAX_ECHOED_NAME)}…' (${model.length} characters)` : `'${model}'`;
    const ending = suggestion === "" ? "." : suggestion.endsWith("?") ? suggestion : `${suggestion}?`;
    super(`The model ${shown} does not exist${ending}${list} GET /models lists them.`, { param: "model" });
    this.model = model;
  }
}

/**
 * A stored response, conversation or item that does not exist here: never made, deleted,
 * expired, or another tenant's (which is never told apart, so ids leak nothing).
 */
export class StoredObjectNotFoundError extends ClientError {
  readonly status = 404;
  readonly code = "not_found";
  constructor(kind: "response" | "conversation" | "item", id: string, param: string | null = null) {
    const shown = id.length > 80 ? `${id.slice(0, 80)}…` : id;
    super(`No ${kind} with id '${shown}' was found.`, { param });
  }
}

/** An assistant, thread, run, checkpoint, store item or graph UI of the Agent Protocol that does not exist here (or is another tenant's). */
export class AgentNotFoundError extends ClientError {
  readonly status = 404;
  readonly code = "not_found";
  constructor(kind: "assistant" | "assistant version" | "thread" | "run" | "checkpoint" | "item" | "cron" | "UI", id: string, hint = "") {
    const shown = id.length > 80 ? `${id.slice(0, 80)}…` : id;
    super(`No ${kind} with id '${shown}' was found.${hint === "" ? "" : ` ${hint}`}`);
  }
}

/**
 * An Agent Protocol request that the thread's state refuses: a busy thread under
 * `multitask_strategy: "reject"`, a thread that exists already, a resume of a thread that is
 * not interrupted (409), or fields that cannot go together (422).
 */
export class AgentConflictError extends ClientError {
  readonly code = "conflict";
  readonly status: 409 | 422;
  constructor(message: string, status: 409 | 422 = 409) {
    super(message);
    this.status = status;
  }
}

/** An Agent Protocol body of the wrong shape (422, as the LangGraph server answers it). */
export class AgentInvalidBodyError extends ClientError {
  readonly status = 422;
  readonly code = "invalid_body";
}

/** A plain request to a path that speaks only WebSocket (protocol v2's `GET /threads/{id}/stream/events`). */
export class UpgradeRequiredError extends ClientError {
  readonly status = 426;
  readonly code = "upgrade_required";
}

/** An `Idempotency-Key` used before with another request body. */
export class IdempotencyKeyReusedError extends ClientError {
  readonly status = 422;
  readonly code = "idempotency_key_reused";
  constructor() {
    super(
      "This Idempotency-Key was used with another request body. Send the same body to get the first request's answer, or use a new key.",
      { param: "Idempotency-Key" },
    );
  }
}

/** No route matches the URL. */
export class UnknownUrlError extends ClientError {
  readonly status = 404;
  readonly code = "unknown_url";
  constructor(method: string, url: string, hint?: string) {
    super(`Unknown request URL: ${method} ${url}.${hint === undefined ? "" : ` ${hint}`}`);
  }
}

/** A known path asked with a method it does not serve. */
export class MethodNotAllowedError extends ClientError {
  readonly status = 405;
  readonly code = "method_not_allowed";
  /** The methods the path serves, for the `Allow` header. */
  readonly allow: readonly string[];
  constructor(method: string, path: string, allow: readonly string[]) {
    super(`${path} does not accept ${method}; use ${allow.join(" or ")}.`);
    this.allow = allow;
  }
}

/** A request URL, header block or framing that is not valid HTTP, or arrived too slowly. */
export class InvalidHttpRequestError extends ClientError {
  readonly status: number;
  readonly code: string;
  constructor(status: 400 | 408 | 431, message: string) {
    super(message);
    this.status = status;
    this.code = status === 408 ? "request_timeout" : status === 431 ? "headers_too_large" : "invalid_request";
  }
}

/** `metadata.graph_runtime_settings` is malformed or does not validate. */
export class InvalidClientSettingsError extends ClientError {
  readonly status = 400;
  readonly code = "invalid_client_settings";
  constructor(message: string, options: Omit<ServeErrorOptions, "param"> = {}) {
    super(message, { ...options, param: "metadata.graph_runtime_settings" });
  }
}

/** `metadata.graph_run_id` is not a UUID, or is the nil UUID. */
export class InvalidRunIdError extends ClientError {
  readonly status = 400;
  readonly code = "invalid_run_id";
  constructor(message: string) {
    super(message, { param: "metadata.graph_run_id" });
  }
}

/** The trailing tool exchange is not a well-formed resume of an interrupt batch. */
export class InvalidResumeError extends ClientError {
  readonly status = 400;
  readonly code = "invalid_resume";
  constructor(message: string) {
    super(message, { param: "messages" });
  }
}

/** Another request holds the run's lease; the service never queues. */
export class RunBusyError extends ClientError {
  readonly status = 409;
  readonly code = "run_busy";
  constructor(message = "This run is already being processed by another request. Retry when it has finished.") {
    super(message);
  }
}

/** A resume does not match the durable pending state of the run. */
export class InterruptStateConflictError extends ClientError {
  readonly status = 409;
  readonly code = "interrupt_state_conflict";
  constructor(message: string) {
    super(message, { param: "messages" });
  }
}

/** The request body is larger than the configured limit. */
export class RequestTooLargeError extends ClientError {
  readonly status = 413;
  readonly code = "request_too_large";
  constructor(limitBytes: number) {
    super(`The request body is larger than the limit of ${limitBytes} bytes.`);
  }
}

/** The request's content type is not JSON. */
export class UnsupportedMediaTypeError extends ClientError {
  readonly status = 415;
  readonly code = "unsupported_media_type";
  constructor(contentType: string | undefined) {
    super(`Unsupported content type '${contentType ?? ""}'. Send the body as application/json.`);
  }
}

/** No API key, or one the server does not know, on a server with `auth`. */
export class InvalidApiKeyError extends ClientError {
  readonly status = 401;
  readonly code = "invalid_api_key";
  constructor(message: string) {
    super(message);
  }
}

/**
 * A project's LangGraph `Auth` refused the request: its `authenticate` or a handler threw an
 * HTTP exception (its status and message), or a handler returned `false` (403).
 */
export class AuthRefusedError extends ClientError {
  readonly status: number;
  readonly code: string;
  /** The exception's headers (a `WWW-Authenticate`), sent with the answer. */
  readonly headers: Record<string, string>;
  constructor(status: number, message: string, headers: Record<string, string>) {
    super(message);
    this.status = status;
    this.code = status === 401 ? "unauthorized" : status === 403 ? "forbidden" : "auth_refused";
    this.headers = headers;
  }
}

/** A project's LangGraph `authenticate` failed or answered nothing usable: the request is refused, not let in. */
export class AuthFailedError extends ServerError {
  readonly status = 500;
  readonly code = "auth_failed";
  constructor() {
    super("The server could not check who is calling, so it refused the request. Its operator can read why in its log.");
  }
}

/** A project's LangGraph auth handler failed or returned what is not a filter: the request is refused. */
export class AuthHandlerError extends ServerError {
  readonly status = 500;
  readonly code = "auth_handler_failed";
  constructor() {
    super("The server could not check what this caller may see, so it refused the request. Its operator can read why in its log.");
  }
}

/** The caller's tenant is over its request rate or its concurrent runs. */
export class RateLimitExceededError extends ServeError {
  readonly status = 429;
  readonly code = "rate_limit_exceeded";
  readonly type = "requests" as const;
  constructor(message: string, retryAfterSeconds: number) {
    super(message, { retryAfterSeconds });
  }
}

/** The server is draining before it stops; another instance, or this one later, will answer. */
export class ServerShuttingDownError extends ServerError {
  readonly status = 503;
  readonly code = "server_shutting_down";
  constructor(retryAfterSeconds = 1) {
    super("The server is shutting down and takes no new requests; retry, and another instance will answer.", { retryAfterSeconds });
  }
}

/** A background run's worker stopped (killed, or out of its shutdown grace) and the run cannot go on. */
export class BackgroundRunLostError extends ServerError {
  readonly status = 500;
  readonly code = "background_run_lost";
}

/** The coordinator or checkpointer cannot be reached. */
export class BackendUnavailableError extends ServerError {
  readonly status = 503;
  readonly code = "backend_unavailable";
}

/**
 * A model provider called by graph code (the OpenAI SDK inside `ChatOpenAI`, for example)
 * answered with an error. The provider's own message, status and code stay in the server log.
 */
export class UpstreamError extends ServerError {
  readonly status = 502;
  readonly code = "upstream_error";
  constructor(options: ServeErrorOptions = {}) {
    super("The model provider behind this model returned an error.", options);
  }
}

/** The model provider is rate limiting, failing (5xx) or unreachable; worth a retry. */
export class UpstreamUnavailableError extends ServerError {
  readonly status = 503;
  readonly code = "upstream_unavailable";
  constructor(options: ServeErrorOptions & { retryAfterSeconds?: number } = {}) {
    super("The model provider behind this model is busy or unavailable; retry shortly.", options);
  }
}

/** A graph interrupted with a value that cannot be represented as JSON. */
export class InvalidInterruptPayloadError extends ServerError {
  readonly status = 500;
  readonly code = "invalid_interrupt_payload";
}

/** A graph cannot satisfy its declared configuration. */
export class GraphConfigurationError extends ServerError {
  readonly status = 500;
  readonly code = "graph_configuration_error";
}

/**
 * An error a graph throws for its user to read: its message reaches the client on every
 * surface (the OpenAI and Anthropic error bodies, AG-UI's `RUN_ERROR`, the AI SDK's error
 * chunk, A2A's failed task, MCP's error result, the Agent Protocol's `error` event and
 * `__error__`). Any other error a graph throws is internal: the client reads a generic
 * sentence and the log keeps the text with the request or run id.
 *
 * @example
 * ```ts
 * import { UserFacingError } from "chat-serve";
 * if (!city) throw new UserFacingError("I do not know that city: try its full name.");
 * ```
 */
export class UserFacingError extends ServerError {
  readonly status = 500;
  readonly code: string;
  constructor(message: string, options: { code?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? {} : { cause: options.cause });
    this.code = options.code ?? "graph_error";
  }
}

/** Anything unexpected. Its message is generic; the cause is only logged. */
export class InternalError extends ServerError {
  readonly status = 500;
  readonly code = "internal_error";
  constructor(options: ServeErrorOptions = {}) {
    super("The server had an error while processing your request.", options);
  }
}

/** A backend call that did not answer within its deadline. */
export class DeadlineExceededError extends ChatServeError {
  readonly timeoutMs: number;
  /** The backend, as a sentence names it ("the thread records"). */
  readonly what: string;
  constructor(what: string, timeoutMs: number) {
    super(`${what} did not answer within ${timeoutMs} ms`);
    this.timeoutMs = timeoutMs;
    this.what = what;
  }
}
