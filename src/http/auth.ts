import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyRequest } from "fastify";
import { z } from "zod";
import { InvalidApiKeyError } from "../errors/catalogue.js";
import { PARSE_ONCE } from "../util/parse-once.js";
import { type LangGraphAuth, type LangGraphAuthContext, userOfTenant } from "./langgraph-auth.js";

/** Who is calling, once authenticated: the tenant, and the models its key may use (all when absent). */
export interface Caller {
  tenant: string;
  models?: ReadonlySet<string>;
  /** The wire this caller gets whatever the mount's profile: `chat-ui` for a chat UI's key. */
  profile?: "strict" | "chat-ui";
  /** The user a project's LangGraph `Auth` handlers see (its `authenticate`'s, or the tenant). */
  authUser?: LangGraphAuthContext;
  /**
   * Set when a LangGraph `Auth` said who is calling: its users share the Agent Protocol's
   * threads and store (scope `default`), and its handlers' filters decide what each sees.
   */
  sharesAgentScope?: boolean;
}

/** What an `authenticate` function returns: the tenant (with its models), or null to refuse. */
export type AuthenticateResult = string | { tenant: string; models?: readonly string[] } | null | undefined;

/**
 * A deployment's own identity check (a JWT, a gateway's headers): the tenant, or null to
 * refuse with 401. Sync or async. Runs only when no API key of `auth.keys` matched.
 */
export type Authenticate = (request: FastifyRequest) => AuthenticateResult | Promise<AuthenticateResult>;

const SHA256_HEX = /^[0-9a-f]{64}$/u;

/** One API key: its tenant, the key itself or its SHA-256 (hex), and optionally the models it may use. */
export const apiKeyEntrySchema = z
  .strictObject({
    tenant: z.string("is required: the tenant this key belongs to").min(1, "must not be empty"),
    key: z.string().min(16, "must be at least 16 characters").optional(),
    sha256: z.string().toLowerCase().regex(SHA256_HEX, "must be the 64 hex digits of the key's SHA-256").optional(),
    models: z.array(z.string().min(1)).min(1, "must list at least one model; leave it out for every model").optional(),
    profile: z.enum(["strict", "chat-ui"], 'must be "strict" or "chat-ui"').optional(),
  })
  .refine((entry) => (entry.key === undefined) !== (entry.sha256 === undefined), {
    error: "needs exactly one of key or sha256 (is the environment variable that holds the key set?)",
  });

export type ApiKeyEntry = z.input<typeof apiKeyEntrySchema>;

export interface AuthSettings {
  /** The API keys, each naming its tenant. */
  keys?: readonly ApiKeyEntry[];
  /** Identity for requests no key matched. */
  authenticate?: Authenticate;
  /**
   * A LangGraph project's `Auth`: with an `authenticate` of its own it says who every request
   * is (the keys then let in LangGraph Studio only); its handlers run on the Agent Protocol.
   */
  customAuth?: LangGraphAuth;
}

/** A secret's SHA-256, the form secrets are kept and compared in (`timingSafeEqual` on equal lengths). */
export function secretDigest(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}

/** The token of `Authorization: Bearer <token>`, if the request sends one. */
export function bearerToken(request: FastifyRequest): string | undefined {
  const authorization = request.headers.authorization;
  return typeof authorization === "string" ? /^Bearer\s+(\S+)\s*$/iu.exec(authorization)?.[1] : undefined;
}

/**
 * The key a request presents: `Authorization: Bearer <key>`, or `x-api-key: <key>` as the
 * LangGraph SDK and Anthropic clients send it, or `api-key: <key>` as Azure clients do.
 */
function presentedKey(request: FastifyRequest): string | undefined {
  const bearer = bearerToken(request);
  if (bearer !== undefined) return bearer;
  for (const header of ["x-api-key", "api-key"]) {
    const apiKey = request.headers[header];
    if (typeof apiKey === "string" && apiKey.trim() !== "") return apiKey.trim();
  }
  return undefined;
}

/**
 * Checks callers against API keys (compared as SHA-256 digests in constant time, every key
 * looked at whatever matches) and then the deployment's own `authenticate`.
 */
export class Authenticator {
  readonly #keys: { digest: Buffer; caller: Caller }[];
  readonly #authenticate: Authenticate | undefined;
  readonly #customAuth: LangGraphAuth | undefined;

  constructor(settings: AuthSettings) {
    this.#keys = (settings.keys ?? []).map((raw, index) => {
      const parsed = apiKeyEntrySchema.safeParse(raw, PARSE_ONCE);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        throw new TypeError(`auth.keys.${[index, ...issue.path].join(".")}: ${issue.message}`);
      }
      const entry = parsed.data;
      const digest = entry.key !== undefined ? secretDigest(entry.key) : Buffer.from(entry.sha256!, "hex");
      const caller: Caller = { tenant: entry.tenant };
      if (entry.models !== undefined) caller.models = new Set(entry.models);
      if (entry.profile !== undefined) caller.profile = entry.profile;
      return { digest, caller };
    });
    this.#authenticate = settings.authenticate;
    this.#customAuth = settings.customAuth;
    if (this.#keys.length === 0 && this.#authenticate === undefined && this.#customAuth === undefined) {
      throw new TypeError("auth needs keys, a keysFile, an authenticate function or a LangGraph Auth");
    }
  }

  /** The project's LangGraph `Auth`, whose handlers the Agent Protocol's routes run. */
  get customAuth(): LangGraphAuth | undefined {
    return this.#customAuth;
  }

  /** Every model any key names, for checking them against the registry. */
  get namedModels(): string[] {
    return [...new Set(this.#keys.flatMap(({ caller }) => [...(caller.models ?? [])]))];
  }

  /** The caller, or an `invalid_api_key` error (or the project's LangGraph `Auth`'s refusal). */
  async identify(request: FastifyRequest): Promise<Caller> {
    const custom = this.#customAuth;
    if (custom?.authenticates === true) {
      // As on LangGraph's server, the project's `authenticate` decides; a deployment key lets Studio in.
      const studioKey = request.headers["x-api-key"];
      const context =
        custom.studioUser(request, typeof studioKey === "string" && this.#matching(studioKey.trim()) !== undefined) ??
        (await custom.authenticate(request));
      return { tenant: context.user.identity, authUser: context, sharesAgentScope: true };
    }
    const caller = await this.#identify(request);
    // Handlers without an `authenticate`: they see the tenant as the user.
    return custom === undefined ? caller : { ...caller, authUser: userOfTenant(caller.tenant) };
  }

  /** The caller of a key of `auth.keys`, compared in constant time (every key looked at). */
  #matching(key: string): Caller | undefined {
    const digest = secretDigest(key);
    let found: Caller | undefined;
    for (const entry of this.#keys) {
      // No early exit: the time taken does not depend on which key matched.
      if (timingSafeEqual(entry.digest, digest) && found === undefined) found = entry.caller;
    }
    return found;
  }

  async #identify(request: FastifyRequest): Promise<Caller> {
    const key = presentedKey(request);
    if (key !== undefined) {
      const found = this.#matching(key);
      if (found !== undefined) return found;
    }
    if (this.#authenticate !== undefined) {
      const result = await this.#authenticate(request);
      if (typeof result === "string" && result !== "") return { tenant: result };
      if (typeof result === "object" && result !== null && typeof result.tenant === "string" && result.tenant !== "") {
        return { tenant: result.tenant, ...(result.models === undefined ? {} : { models: new Set(result.models) }) };
      }
    }
    throw new InvalidApiKeyError(
      key === undefined
        ? "You didn't provide an API key. Send it as 'Authorization: Bearer YOUR_KEY' (or in an 'api-key' header)."
        : "Incorrect API key provided. Ask the operator of this server for a valid key.",
    );
  }
}
