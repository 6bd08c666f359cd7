import type { ServeError } from "../errors/serve-error.js";
import type { ErrorBody } from "../wire/response.js";

/** The OpenAI error body of a ServeError. */
export function errorBody(error: ServeError): ErrorBody {
  return { error: { message: error.message, type: error.type, param: error.param, code: error.code } };
}
