import { UpstreamError, UpstreamUnavailableError } from "./catalogue.js";
import type { ServeError } from "./serve-error.js";

// How deep to follow `cause` chains: LangChain and LangGraph wrap a provider error at most
// a couple of times.
const MAX_CAUSE_DEPTH = 5;

// Errors of provider SDKs that never reached the provider (connection refused, timed out).
const CONNECTION_ERROR_NAMES = new Set(["APIConnectionError", "APIConnectionTimeoutError"]);

interface ProviderErrorShape {
  status?: unknown;
  name?: unknown;
  headers?: unknown;
  cause?: unknown;
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
 * shape every provider SDK uses) or a connection failure. Undefined for any other error.
 * The provider's message is never passed on: the original stays the `cause`, for the log.
 */
export function providerFailure(error: unknown): ServeError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && current !== null && typeof current === "object"; depth += 1) {
    const { status, name, headers, cause } = current as ProviderErrorShape;
    if (typeof status === "number" && Number.isInteger(status) && status >= 400 && status <= 599) {
      if (status === 429 || status >= 500) {
        return new UpstreamUnavailableError({ cause: error, retryAfterSeconds: retryAfterSeconds(headers) });
      }
      return new UpstreamError({ cause: error });
    }
    if (typeof name === "string" && CONNECTION_ERROR_NAMES.has(name)) return new UpstreamUnavailableError({ cause: error });
    current = cause;
  }
  return undefined;
}
