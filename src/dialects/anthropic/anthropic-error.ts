import type { ServeError } from "../../errors/serve-error.js";

// Errors in Anthropic's shape, `{"type":"error","error":{"type","message"}}`, each status with
// the error type Anthropic gives it, so that its SDKs raise the class a client expects.

const TYPE_BY_STATUS: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "billing_error",
  403: "permission_error",
  404: "not_found_error",
  405: "invalid_request_error",
  409: "invalid_request_error",
  413: "request_too_large",
  415: "invalid_request_error",
  422: "invalid_request_error",
  429: "rate_limit_error",
  503: "overloaded_error",
  504: "timeout_error",
};

/** The Anthropic error type of a status. */
function anthropicErrorType(status: number): string {
  return TYPE_BY_STATUS[status] ?? (status >= 500 ? "api_error" : "invalid_request_error");
}

/** A ServeError as Anthropic's error body. */
export function anthropicErrorBody(error: ServeError): { type: "error"; error: { type: string; message: string } } {
  return { type: "error", error: { type: anthropicErrorType(error.status), message: error.message } };
}
