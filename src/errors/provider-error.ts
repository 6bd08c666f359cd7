import { UpstreamError, UpstreamUnavailableError } from "./catalogue.js";
import type { ServeError } from "./serve-error.js";

// How deep to follow `cause` chains: LangChain and LangGraph wrap a provider error at most
// a couple of times.
const MAX_CAUSE_DEPTH = 5;

// Errors of provider SDKs that never got an answer from the provider. The openai SDK's
// classes keep their names on the constructor only (v6 leaves `name` as "Error"); LangChain
// turns a timeout into an Error named "TimeoutError", as AbortSignal.timeout() does.
const UNREACHABLE_NAMES = new Set(["APIConnectionError", "APIConnectionTimeoutError", "TimeoutError"]);

// Node's and undici's codes for a connection that could not be made, or broke, or stalled.
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
]);

interface ProviderErrorShape {
  status?: unknown;
  name?: unknown;
  code?: unknown;
  headers?: unknown;
  cause?: unknown;
}

/** A failure to reach the provider at all, told by what the error is, not by its message. */
function isUnreachable(error: object, { name, code }: ProviderErrorShape): boolean {
  return (
    (typeof name === "string" && UNREACHABLE_NAMES.has(name)) ||
    UNREACHABLE_NAMES.has(error.constructor?.name ?? "") ||
    (typeof code === "string" && NETWORK_CODES.has(code))
  );
}

function header(headers: unknown, name: string): string | undefined {
  if (headers === null || typeof headers !== "object") return undefined;
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  const value = (headers as Record<string, unknown>)[name];
  return typeof value === "string" ? value : undefined;
}

/** `Retry-After` in whole seconds from a provider's response headers, if it sent one. */
function retryAfterSeconds(headers: unknown): number | undefined {
  const milliseconds = Number(header(headers, "retry-after-ms"));
  if (Number.isFinite(milliseconds) && milliseconds > 0) return Math.ceil(milliseconds / 1000);
  const value = header(headers, "retry-after");
  if (value === undefined) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds);
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

/**
 * The error a client should see when graph code failed because a model provider did: an HTTP
 * error from the provider's API (anything carrying a numeric `status` from 400 to 599, the
 * shape every provider SDK uses), or a provider that could not be reached: connection refused,
 * a name that does not resolve, a connection that broke or timed out (an SDK's connection
 * error class, or a network error code anywhere in the `cause` chain). Undefined for any
 * other error.
 * The provider's message is never passed on: the original stays the `cause`, for the log.
 */
export function providerFailure(error: unknown): ServeError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && current !== null && typeof current === "object"; depth += 1) {
    const shape = current as ProviderErrorShape;
    const { status, headers, cause } = shape;
    if (typeof status === "number" && Number.isInteger(status) && status >= 400 && status <= 599) {
      if (status === 429 || status >= 500) {
        return new UpstreamUnavailableError({ cause: error, retryAfterSeconds: retryAfterSeconds(headers) });
      }
      return new UpstreamError({ cause: error });
    }
    if (isUnreachable(current, shape)) return new UpstreamUnavailableError({ cause: error });
    current = cause;
  }
  return undefined;
}
