import type { FastifyRequest } from "fastify";
import { AuthFailedError, AuthHandlerError, AuthRefusedError } from "../errors/catalogue.js";
import { toFetchRequest } from "./custom-routes.js";

/** The user an `Auth`'s `authenticate` returned, as LangGraph's server hands it to handlers and graphs. */
export interface LangGraphUser {
  identity: string;
  display_name: string;
  is_authenticated: boolean;
  permissions: string[];
  [key: string]: unknown;
}

/** Who is calling under a project's `Auth`: the user and their permissions (LangGraph's `scopes`). */
export interface LangGraphAuthContext {
  user: LangGraphUser;
  scopes: string[];
}

/** A handler's filter on a resource's metadata: a value (equal), `{ $eq }` or `{ $contains }`. */
export type AuthFilters = Record<string, unknown>;

type Handler = (request: {
  event: string;
  resource: string;
  action: string;
  value: unknown;
  permissions: string[];
  user: LangGraphUser;
}) => unknown;

interface HandlerCache {
  authenticate?: (request: Request) => unknown;
  callbacks?: Record<string, Handler>;
}

/** The user LangGraph Studio's requests act as, when the deployment lets Studio in. */
const STUDIO_USER: LangGraphUser = {
  kind: "StudioUser",
  identity: "langgraph-studio-user",
  display_name: "langgraph-studio-user",
  is_authenticated: true,
  permissions: [],
};

/** The user handlers see for a caller a key or chat-serve's `authenticate` identified: the tenant. */
export function userOfTenant(tenant: string): LangGraphAuthContext {
  return { scopes: [], user: { identity: tenant, display_name: tenant, is_authenticated: true, permissions: [] } };
}

/** True for what an `Auth` of `@langchain/langgraph-sdk/auth` is (any copy of the package). */
export function isLangGraphAuth(value: unknown): boolean {
  return typeof value === "object" && value !== null && "~handlerCache" in value;
}

/** An HTTP exception of the SDK's auth (or one shaped like it): a status to answer with. */
function httpException(error: unknown): { status: number; message: string; headers: Record<string, string> } | undefined {
  if (typeof error !== "object" || error === null || !("status" in error) || !("headers" in error)) return undefined;
  const { status, message, headers } = error as { status: unknown; message?: unknown; headers?: unknown };
  if (typeof status !== "number" || !Number.isInteger(status) || status < 400 || status > 599) return undefined;
  return {
    status,
    message: typeof message === "string" && message !== "" ? message : "Unauthorized",
    headers: typeof headers === "object" && headers !== null ? (headers as Record<string, string>) : {},
  };
}

/**
 * A LangGraph project's `Auth` (`langgraph.json`'s `auth.path`, or `auth.custom` in a
 * chat-serve config), run as LangGraph's Agent Server runs it: `authenticate` on every request,
 * then per resource and action the most specific handler, whose filters the routes apply to
 * what they read and whose changes to the value (an owner in its metadata) they keep. It fails
 * closed: an `authenticate` that throws anything but an HTTP exception refuses the request, a
 * handler that returns something else than a filter refuses it too.
 */
export class LangGraphAuth {
  readonly #handlers: HandlerCache;
  readonly #studio: boolean;

  constructor(auth: unknown, options: { disableStudioAuth?: boolean } = {}) {
    if (!isLangGraphAuth(auth)) throw new TypeError("must be an Auth of @langchain/langgraph-sdk/auth");
    this.#handlers = (auth as { "~handlerCache": HandlerCache })["~handlerCache"];
    this.#studio = options.disableStudioAuth !== true;
  }

  /** Whether the project's `Auth` says who is calling (without `authenticate`, the API keys do). */
  get authenticates(): boolean {
    return typeof this.#handlers.authenticate === "function";
  }

  /**
   * LangGraph Studio's user, for a request Studio sends (`x-auth-scheme: langsmith`) with one of
   * the deployment's own API keys in `x-api-key` (`keyMatches`), unless `disable_studio_auth`.
   */
  studioUser(request: FastifyRequest, keyMatches: boolean): LangGraphAuthContext | undefined {
    if (!this.#studio || request.headers["x-auth-scheme"] !== "langsmith" || !keyMatches) return undefined;
    return { user: { ...STUDIO_USER }, scopes: [] };
  }

  /** The caller as the project's `authenticate` says, or a refusal (never an anonymous caller). */
  async authenticate(request: FastifyRequest): Promise<LangGraphAuthContext> {
    const authenticate = this.#handlers.authenticate;
    if (authenticate === undefined) throw new AuthFailedError();
    let result: unknown;
    try {
      result = await authenticate(toFetchRequest(request));
    } catch (error) {
      const refusal = httpException(error);
      if (refusal !== undefined) throw new AuthRefusedError(refusal.status, refusal.message, refusal.headers);
      request.log.error({ err: error }, "the project's authenticate failed: the request is refused");
      throw new AuthFailedError();
    }
    if (typeof result === "string" && result !== "") {
      return { scopes: [], user: { identity: result, display_name: result, is_authenticated: true, permissions: [] } };
    }
    if (typeof result === "object" && result !== null && typeof (result as { identity?: unknown }).identity === "string") {
      const user = result as Partial<LangGraphUser> & { identity: string };
      if (user.identity !== "") {
        const permissions = Array.isArray(user.permissions) ? user.permissions.filter((scope) => typeof scope === "string") : [];
        return {
          scopes: permissions,
          user: {
            ...user,
            permissions,
            is_authenticated: user.is_authenticated ?? true,
            display_name: typeof user.display_name === "string" ? user.display_name : user.identity,
          },
        };
      }
    }
    request.log.error("the project's authenticate returned neither a user id nor an object with an identity: the request is refused");
    throw new AuthFailedError();
  }

  /**
   * The filters the handler of `event` (`resource:action`) returns for `value`, which it may
   * change (an owner added to the metadata): the value to use from then on. No handler: no filter.
   */
  async authorize<V>(request: FastifyRequest, event: string, value: V): Promise<{ filters?: AuthFilters; value: V }> {
    const callbacks = this.#handlers.callbacks;
    const context = request.chatServeCaller?.authUser;
    if (callbacks === undefined || context === undefined) return { value };
    const [resource, action] = event.split(":") as [string, string];
    const key = [event, resource, `*:${action}`, "*"].find((candidate) => typeof callbacks[candidate] === "function");
    if (key === undefined) return { value };
    let result: unknown;
    try {
      result = await callbacks[key]!({ event, resource, action, value, permissions: context.scopes, user: context.user });
    } catch (error) {
      const refusal = httpException(error);
      if (refusal !== undefined) throw new AuthRefusedError(refusal.status, refusal.message, refusal.headers);
      request.log.error({ err: error }, `the project's auth handler for ${event} failed: the request is refused`);
      throw new AuthHandlerError();
    }
    if (result === undefined || result === null || result === true) return { value };
    if (result === false) throw new AuthRefusedError(403, "Forbidden", {});
    if (!isFilters(result)) {
      request.log.error(
        `the project's auth handler for ${event} returned ${describe(result)}, not a filter object, null, undefined or a boolean: the request is refused`,
      );
      throw new AuthHandlerError();
    }
    return { filters: result, value };
  }
}

/** A filter object as LangGraph's server reads one: each key a value, `{ $eq }` or `{ $contains }`. */
function isFilters(value: unknown): value is AuthFilters {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  return Object.values(value).every((condition) => {
    if (typeof condition !== "object" || condition === null) return true;
    const keys = Object.keys(condition);
    return keys.length === 1 && (keys[0] === "$eq" || keys[0] === "$contains");
  });
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object" && value !== null) return "an object with an operator other than $eq or $contains";
  return `a ${typeof value}`;
}

/** Whether a resource's metadata passes a handler's filters (`$eq`, `$contains` as LangGraph's server reads them). */
export function matchesFilters(metadata: Record<string, unknown> | undefined | null, filters: AuthFilters | undefined): boolean {
  if (filters === undefined) return true;
  for (const [key, condition] of Object.entries(filters)) {
    const actual = metadata?.[key];
    if (typeof condition === "object" && condition !== null && !Array.isArray(condition)) {
      if ("$eq" in condition) {
        if (!sameValue(actual, (condition as { $eq: unknown }).$eq)) return false;
      } else if ("$contains" in condition) {
        if (!Array.isArray(actual)) return false;
        const wanted = (condition as { $contains: unknown }).$contains;
        const all = Array.isArray(wanted) ? wanted : [wanted];
        if (!all.every((item) => actual.some((present) => sameValue(present, item)))) return false;
      }
    } else if (!sameValue(actual, condition)) {
      return false;
    }
  }
  return true;
}

function sameValue(left: unknown, right: unknown): boolean {
  if (left === right) return true;
  return typeof left === "object" && typeof right === "object" && JSON.stringify(left) === JSON.stringify(right);
}
