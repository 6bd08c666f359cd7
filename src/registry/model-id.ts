// RFC 3986 `pchar` without percent-encoding: what fits in one URL path segment as written.
const PATH_SEGMENT = /^[A-Za-z0-9._~!$&'()*+,;=:@-]+$/u;

/** Why a model ID cannot be one URL path segment, or null when it can. */
export function modelIdProblem(modelId: string): string | null {
  if (modelId.length === 0) return "a model ID must not be empty";
  if (modelId.length > 256) return "a model ID is at most 256 characters";
  if (modelId === "." || modelId === "..") return `'${modelId}' cannot be used as a URL path segment`;
  if (!PATH_SEGMENT.test(modelId)) {
    return `'${modelId}' must fit in one URL path segment: use letters, digits and . _ ~ - : @ (no '/', spaces or '%')`;
  }
  return null;
}
