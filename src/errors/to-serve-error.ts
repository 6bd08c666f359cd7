import {
  BackendUnavailableError,
  DeadlineExceededError,
  InternalError,
  InvalidRequestError,
  RequestTooLargeError,
  UnsupportedMediaTypeError,
} from "./catalogue.js";
import { providerFailure } from "./provider-error.js";
import { isServeError, type ServeError } from "./serve-error.js";

interface FastifyLikeError {
  code?: string;
  statusCode?: number;
  message?: string;
}

/**
 * The one mapper from any thrown value to a ServeError, used by the error handler, the
 * not-found handler and SSE error frames. Only chat-serve's own (branded) errors keep their
 * codes; framework errors are matched on their stable `code`; a model provider's error is
 * `upstream_error` or `upstream_unavailable`; anything else becomes a generic internal error.
 * The original is kept as the `cause`, which only the log sees.
 */
export function toServeError(error: unknown, context: { bodyLimit?: number; contentType?: string } = {}): ServeError {
  if (isServeError(error)) return error;
  // A backend that did not answer in time is unavailable, wherever the call was made.
  if (error instanceof DeadlineExceededError) {
    const what = error.what.charAt(0).toUpperCase() + error.what.slice(1);
    return new BackendUnavailableError(`${what} did not answer in time; retry shortly.`, { cause: error });
  }
  const { code, statusCode, message } = (error ?? {}) as FastifyLikeError;
  switch (code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return new RequestTooLargeError(context.bodyLimit ?? 0);
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return new UnsupportedMediaTypeError(context.contentType);
    default:
      break;
  }
  if (typeof code === "string" && code.startsWith("FST_") && typeof statusCode === "number" && statusCode >= 400 && statusCode < 500) {
    // Other framework client errors (bad content length, prototype poisoning): their
    // messages are the framework's own wording, safe to show.
    return new InvalidRequestError(message ?? "The request is not valid.", { cause: error });
  }
  const upstream = providerFailure(error);
  if (upstream !== undefined) return upstream;
  if (typeof statusCode === "number" && statusCode >= 400 && statusCode < 500) {
    // A request stream that failed while the body was read (the client aborted it): the
    // wording is Node's, not ours, so it stays in the log.
    return new InvalidRequestError("The request body could not be read.", { cause: error });
  }
  return new InternalError({ cause: error });
}
