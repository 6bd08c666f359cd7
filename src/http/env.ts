import { z } from "zod";
import { ConfigError } from "../errors/developer-errors.js";
import type { TracingSettings } from "../tracing/tracing-callback.js";
import { PARSE_ONCE } from "../util/parse-once.js";

const booleanText = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.enum(["true", "false", "1", "0", "yes", "no", "on", "off", ""]))
  .transform((value) => ["true", "1", "yes", "on"].includes(value));

const envSchema = z.object({
  SVC_CHAT_API_PREFIX: z.string().optional(),
  SVC_CHAT_API_DOCS_ENABLED: booleanText.optional(),
  SVC_ENABLE_TRACING: booleanText.optional(),
  TRACING_PUBLIC_KEY: z.string().optional(),
  TRACING_SECRET_KEY: z.string().optional(),
  TRACING_BASE_URL: z.url().optional(),
});

/** The deployment settings read from the process environment (spec 2.1). */
export interface EnvSettings {
  prefix?: string;
  docsEnabled?: boolean;
  tracingEnabled: boolean;
  tracingPublicKey?: string;
  tracingSecretKey?: string;
  tracingBaseUrl?: string;
}

/** Reads and validates the `SVC_*` and `TRACING_*` settings; a bad value names the variable. */
export function readEnvSettings(env: NodeJS.ProcessEnv = process.env): EnvSettings {
  const result = envSchema.safeParse(env, PARSE_ONCE);
  if (!result.success) {
    const issue = result.error.issues[0];
    const name = String(issue?.path[0] ?? "environment");
    const hint = name.endsWith("_URL") ? "a URL" : "true or false";
    throw new ConfigError(`environment variable ${name} must be ${hint} (got ${JSON.stringify(env[name])})`);
  }
  const values = result.data;
  return {
    prefix: values.SVC_CHAT_API_PREFIX === undefined ? undefined : normalizePrefix(values.SVC_CHAT_API_PREFIX, "SVC_CHAT_API_PREFIX"),
    docsEnabled: values.SVC_CHAT_API_DOCS_ENABLED,
    tracingEnabled: values.SVC_ENABLE_TRACING ?? false,
    tracingPublicKey: values.TRACING_PUBLIC_KEY || undefined,
    tracingSecretKey: values.TRACING_SECRET_KEY || undefined,
    tracingBaseUrl: values.TRACING_BASE_URL,
  };
}

/** A prefix must start with `/`; trailing slashes are dropped (`/` alone mounts at the root). */
export function normalizePrefix(prefix: string, source = "prefix"): string {
  if (!prefix.startsWith("/")) throw new ConfigError(`${source} must start with '/' (got ${JSON.stringify(prefix)})`);
  if (/[\s?#]/u.test(prefix)) throw new ConfigError(`${source} must be a plain URL path (got ${JSON.stringify(prefix)})`);
  return prefix.replace(/\/+$/u, "");
}

/**
 * The tracing settings the environment asks for: undefined when `SVC_ENABLE_TRACING` is off,
 * a ConfigError naming what is missing when it is on without both keys.
 */
export function tracingSettingsFromEnv(env: EnvSettings): TracingSettings | undefined {
  if (!env.tracingEnabled) return undefined;
  const missing = [
    env.tracingPublicKey === undefined ? "TRACING_PUBLIC_KEY" : undefined,
    env.tracingSecretKey === undefined ? "TRACING_SECRET_KEY" : undefined,
  ].filter((name) => name !== undefined);
  if (missing.length > 0) {
    throw new ConfigError(
      `SVC_ENABLE_TRACING is true but ${missing.join(" and ")} ${missing.length > 1 ? "are" : "is"} not set; set ${missing.length > 1 ? "them" : "it"} or turn tracing off`,
    );
  }
  return { publicKey: env.tracingPublicKey!, secretKey: env.tracingSecretKey!, baseUrl: env.tracingBaseUrl };
}
