import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { parseEnv } from "node:util";
import { z } from "zod";
import type { RunWebhookPolicy } from "../background/webhooks.js";
import { ConfigError } from "../errors/developer-errors.js";
import { firstLine } from "../errors/first-line.js";
import type { CorsSettings } from "../http/cors.js";
import { envTemplateProblem } from "../util/env-template.js";
import { PARSE_ONCE } from "../util/parse-once.js";
import { headerPatterns, regexSource, uiSchema } from "./agent-server-config.js";

/** The file `langgraph dev` and the LangGraph API server read a project's graphs from. */
export const LANGGRAPH_JSON = "langgraph.json";

/** The keys of `langgraph.json` chat-serve reads; every other key is reported once and ignored. */
const READ_KEYS = ["graphs", "env", "auth", "store", "checkpointer", "http", "webhooks", "ui", "ui_config"];

/** `http`'s route switches, LangGraph's names. */
const HTTP_SWITCHES = [
  "disable_assistants",
  "disable_threads",
  "disable_runs",
  "disable_store",
  "disable_meta",
  "disable_mcp",
  "disable_a2a",
  "disable_ui",
  "disable_webhooks",
] as const;
/** `http`'s keys chat-serve reads. */
const HTTP_KEYS: readonly string[] = ["app", "enable_custom_route_auth", "mount_prefix", "cors", "configurable_headers", ...HTTP_SWITCHES];

const graphReference = z.union([
  z.string().min(1, "must be a './file.ts:export' reference"),
  z.looseObject({ path: z.string().min(1, "must be a './file.ts:export' reference"), description: z.string().optional() }),
]);
const langGraphJsonSchema = z.looseObject({
  graphs: z.record(z.string().min(1), graphReference, "is required: an object of graph id → './file.ts:export'"),
  env: z.union([z.string().min(1), z.record(z.string(), z.string())], "must be a path to an env file or an object of variables").optional(),
  http: z
    .looseObject({
      app: z.string("must be './src/app.ts:app', the module and export of the project's Hono app").min(1).optional(),
      enable_custom_route_auth: z.boolean("must be true or false").optional(),
      mount_prefix: z
        .string("must be a path such as '/api'")
        .regex(/^\/[^\s?#]*$/u, "must be a path such as '/api'")
        .optional(),
      ...Object.fromEntries(HTTP_SWITCHES.map((key) => [key, z.boolean("must be true or false").optional()])),
      cors: z
        .looseObject({
          allow_origins: z.array(z.string().min(1)).optional(),
          allow_origin_regex: regexSource.optional(),
          allow_methods: z.array(z.string().min(1)).optional(),
          allow_headers: z.array(z.string().min(1)).optional(),
          expose_headers: z.array(z.string().min(1)).optional(),
          allow_credentials: z.boolean("must be true or false").optional(),
          max_age: z.int("must be a whole number of seconds").min(0).optional(),
        })
        .optional(),
      configurable_headers: z
        .looseObject({
          includes: headerPatterns.optional(),
          excludes: headerPatterns.optional(),
          include: headerPatterns.optional(),
          exclude: headerPatterns.optional(),
        })
        .optional(),
    })
    .optional(),
  ui: uiSchema.optional(),
  ui_config: z.looseObject({ shared: z.array(z.string().min(1), "must be a list of package names").optional() }).optional(),
  checkpointer: z
    .looseObject({
      ttl: z
        .looseObject({
          strategy: z.enum(["delete", "keep_latest"], 'must be "delete" or "keep_latest"').optional(),
          default_ttl: z.number("must be a number of minutes").positive("must be more than 0 minutes").optional(),
          sweep_interval_minutes: z.number("must be a number of minutes").positive("must be more than 0 minutes").optional(),
        })
        .optional(),
    })
    .optional(),
  store: z
    .looseObject({
      index: z
        .looseObject({
          embed: z.string("is required: './embed.ts:embed' or 'openai:text-embedding-3-small'").min(1, "must not be empty"),
          dims: z.int("is required: the embeddings' dimensions, a whole number").min(1),
          fields: z.array(z.string().min(1)).optional(),
        })
        .optional(),
      ttl: z
        .looseObject({
          default_ttl: z.number("must be a number of minutes").positive("must be more than 0 minutes").optional(),
          refresh_on_read: z.boolean("must be true or false").optional(),
          sweep_interval_minutes: z.number("must be a number of minutes").positive("must be more than 0 minutes").optional(),
        })
        .optional(),
    })
    .optional(),
  webhooks: z
    .looseObject({
      env_prefix: z.string().min(1, "must not be empty").optional(),
      headers: z.record(z.string(), z.string("must be a string: a value, or a template naming an LG_WEBHOOK_ variable")).optional(),
      url: z
        .looseObject({
          require_https: z.boolean("must be true or false").optional(),
          allowed_domains: z.array(z.string().min(1)).optional(),
          allowed_ports: z.array(z.int("must be whole numbers").min(1).max(65_535)).optional(),
          max_url_length: z.int("must be a whole number of characters").min(1).optional(),
          disable_loopback: z.boolean("must be true or false").optional(),
        })
        .optional(),
    })
    .superRefine((webhooks, context) => {
      for (const [name, value] of Object.entries(webhooks.headers ?? {})) {
        const problem = envTemplateProblem(value, webhooks.env_prefix ?? "LG_WEBHOOK_");
        if (problem !== undefined) context.addIssue({ code: "custom", path: ["headers", name], message: problem });
      }
    })
    .optional(),
  auth: z
    .looseObject({
      path: z.string("is required: './auth.ts:auth', the module and export of the project's Auth").min(1, "must not be empty"),
      disable_studio_auth: z.boolean("must be true or false").optional(),
    })
    .optional(),
});

/** One graph `langgraph.json` lists. */
export interface LangGraphJsonGraph {
  /** `./file.ts:export`, relative to the folder of `langgraph.json`. */
  reference: string;
  description?: string;
}

/** What chat-serve read from a `langgraph.json`. */
export interface LangGraphProject {
  filepath: string;
  graphs: Record<string, LangGraphJsonGraph>;
  /** The keys chat-serve does not read (`dependencies`, `node_version`, …). */
  ignoredKeys: string[];
  /** Where `env` came from: the env file's path as written, or `langgraph.json` itself for an object. */
  env?: { from: string; variables: Record<string, string> };
  /**
   * `http`: the project's own routes (`app`, relative to the file's folder) and whether the auth
   * guards them, `mount_prefix`, the route switches that are on (`disable_runs`, …), CORS and
   * the headers runs get, in a config's names.
   */
  http?: {
    app?: string;
    enableCustomRouteAuth: boolean;
    mountPrefix?: string;
    disabled: (typeof HTTP_SWITCHES)[number][];
    cors?: CorsSettings;
    configurableHeaders?: { includes?: string[]; excludes?: string[] };
  };
  /** `checkpointer.ttl`: threads swept after that many idle minutes (as LangGraph names its keys). */
  checkpointerTtl?: { strategy?: string; default_ttl?: number; sweep_interval_minutes?: number };
  /** `store.ttl`: store items' time to live, in a config's names. */
  storeTtl?: { defaultTtl?: number; refreshOnRead?: boolean; sweepIntervalMinutes?: number };
  /** `store.index`: the semantic index of LangGraph's store (`embed` relative to the file's folder, or `provider:model`). */
  storeIndex?: { embed: string; dims: number; fields?: string[] };
  /** `webhooks`: what a run's webhook may call and the headers it carries, in a config's names. */
  webhooks?: RunWebhookPolicy;
  /** `ui`: graph id → the file of its generative UI components (relative to the file's folder). */
  ui?: Record<string, string>;
  /** `ui_config`: `shared` packages left out of the UI bundles. */
  uiConfig?: { shared?: string[] };
  /** `auth`: the project's `Auth` (`./auth.ts:auth`, relative to the file's folder) and Studio's way in. */
  auth?: { path: string; disableStudioAuth: boolean };
}

/** Reads and checks a `langgraph.json`; every mistake is one line naming the file and the key. */
export function readLangGraphJson(filepath: string, displayPath: string): LangGraphProject {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(filepath, "utf8"));
  } catch (error) {
    throw new ConfigError(`${displayPath}: could not be read: ${firstLine(error)}`, { cause: error });
  }
  const parsed = langGraphJsonSchema.safeParse(value, PARSE_ONCE);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = issue.path.length === 0 ? "" : `${issue.path.map(String).join(".")}: `;
    throw new ConfigError(`${displayPath}: ${key}${issue.message}`);
  }
  const graphs: Record<string, LangGraphJsonGraph> = {};
  for (const [id, entry] of Object.entries(parsed.data.graphs)) {
    graphs[id] =
      typeof entry === "string"
        ? { reference: entry }
        : { reference: entry.path, ...(entry.description === undefined ? {} : { description: entry.description }) };
  }
  if (Object.keys(graphs).length === 0) throw new ConfigError(`${displayPath}: graphs: lists no graphs`);
  const project: LangGraphProject = {
    filepath,
    graphs,
    ignoredKeys: Object.keys(parsed.data).filter((key) => !READ_KEYS.includes(key)),
  };
  const { env, auth, store, checkpointer, http } = parsed.data;
  if (http !== undefined) project.http = httpOf(http);
  for (const key of Object.keys(http ?? {})) if (!HTTP_KEYS.includes(key)) project.ignoredKeys.push(`http.${key}`);
  if (checkpointer?.ttl !== undefined) project.checkpointerTtl = checkpointer.ttl;
  for (const key of Object.keys(checkpointer ?? {})) if (key !== "ttl") project.ignoredKeys.push(`checkpointer.${key}`);
  if (store?.index !== undefined) {
    const { embed, dims, fields } = store.index;
    project.storeIndex = { embed, dims, ...(fields === undefined ? {} : { fields }) };
  }
  if (store?.ttl !== undefined) {
    const { default_ttl: defaultTtl, refresh_on_read: refreshOnRead, sweep_interval_minutes: sweepIntervalMinutes } = store.ttl;
    project.storeTtl = {
      ...(defaultTtl === undefined ? {} : { defaultTtl }),
      ...(refreshOnRead === undefined ? {} : { refreshOnRead }),
      ...(sweepIntervalMinutes === undefined ? {} : { sweepIntervalMinutes }),
    };
  }
  // What of `store` is not read is named with the other keys left aside.
  for (const key of Object.keys(store ?? {})) if (key !== "index" && key !== "ttl") project.ignoredKeys.push(`store.${key}`);
  if (parsed.data.ui !== undefined) project.ui = parsed.data.ui;
  if (parsed.data.ui_config?.shared !== undefined) project.uiConfig = { shared: parsed.data.ui_config.shared };
  for (const key of Object.keys(parsed.data.ui_config ?? {})) if (key !== "shared") project.ignoredKeys.push(`ui_config.${key}`);
  if (auth !== undefined) project.auth = { path: auth.path, disableStudioAuth: auth.disable_studio_auth ?? false };
  if (parsed.data.webhooks !== undefined) {
    const { env_prefix: envPrefix, headers, url } = parsed.data.webhooks;
    project.webhooks = {
      ...(url?.require_https === undefined ? {} : { requireHttps: url.require_https }),
      ...(url?.allowed_domains === undefined ? {} : { allowedDomains: url.allowed_domains }),
      ...(url?.allowed_ports === undefined ? {} : { allowedPorts: url.allowed_ports }),
      ...(url?.max_url_length === undefined ? {} : { maxUrlLength: url.max_url_length }),
      ...(url?.disable_loopback === undefined ? {} : { disableLoopback: url.disable_loopback }),
      ...(headers === undefined ? {} : { headers }),
      ...(envPrefix === undefined ? {} : { envPrefix }),
    };
  }
  if (typeof env === "string") {
    const envFile = path.resolve(path.dirname(filepath), env);
    if (!existsSync(envFile)) throw new ConfigError(`${displayPath}: env: cannot find the env file '${env}' (looked for ${envFile})`);
    project.env = { from: env, variables: parseEnv(readFileSync(envFile, "utf8")) as Record<string, string> };
  } else if (env !== undefined) {
    project.env = { from: path.basename(filepath), variables: env };
  }
  return project;
}

/** langgraph.json's `http` in a config's names (what it leaves out keeps the config's default). */
function httpOf(http: NonNullable<z.output<typeof langGraphJsonSchema>["http"]>): NonNullable<LangGraphProject["http"]> {
  const { cors, configurable_headers: headers } = http;
  const includes = [...(headers?.includes ?? []), ...(headers?.include ?? [])];
  const excludes = [...(headers?.excludes ?? []), ...(headers?.exclude ?? [])];
  const switches = http as Partial<Record<(typeof HTTP_SWITCHES)[number], boolean>>;
  return {
    ...(http.app === undefined ? {} : { app: http.app }),
    enableCustomRouteAuth: http.enable_custom_route_auth ?? false,
    ...(http.mount_prefix === undefined || http.mount_prefix === "/" ? {} : { mountPrefix: http.mount_prefix }),
    disabled: HTTP_SWITCHES.filter((key) => switches[key] === true),
    ...(cors === undefined
      ? {}
      : {
          cors: {
            // No origins named: any, as LangGraph.js's server allows.
            ...(cors.allow_origins === undefined && cors.allow_origin_regex !== undefined ? {} : { origins: cors.allow_origins ?? ["*"] }),
            ...(cors.allow_origin_regex === undefined ? {} : { originRegex: cors.allow_origin_regex }),
            ...(cors.allow_methods === undefined ? {} : { methods: cors.allow_methods }),
            ...(cors.allow_headers === undefined ? {} : { headers: cors.allow_headers }),
            ...(cors.expose_headers === undefined ? {} : { exposeHeaders: cors.expose_headers }),
            ...(cors.allow_credentials === undefined ? {} : { credentials: cors.allow_credentials }),
            ...(cors.max_age === undefined ? {} : { maxAge: cors.max_age }),
          },
        }),
    ...(headers === undefined
      ? {}
      : {
          configurableHeaders: {
            ...(includes.length === 0 && headers.includes === undefined && headers.include === undefined ? {} : { includes }),
            ...(excludes.length === 0 ? {} : { excludes }),
          },
        }),
  };
}

/**
 * Sets the project's `env` variables the environment does not set already (the environment
 * wins, as with `langgraph dev`), before the graph modules are imported.
 */
export function applyLangGraphEnv(project: LangGraphProject): void {
  for (const [name, value] of Object.entries(project.env?.variables ?? {})) process.env[name] ??= value;
}

/**
 * What a `langgraph.json` graph gets, as `langgraph dev` serves it: tokens stream from every node
 * but tool nodes and middleware hooks, custom events and tool statuses reach the client, and
 * `interrupt()` pauses the run. A `chat-serve.config.ts` (`init --from langgraph.json`) changes them.
 */
export const LANGGRAPH_DEFAULTS = {
  streamableNodeNames: "auto",
  features: ["CLIENT_EVENTS", "INTERRUPTS"],
  events: { tools: true },
} as const;

/** The description a graph gets when neither `langgraph.json` nor the compiled graph has one. */
export function defaultDescription(id: string, graph: LangGraphJsonGraph): string {
  return `The LangGraph graph '${id}' (${graph.reference}).`;
}

/**
 * A `"./langgraph.json:agent"` reference in a chat-serve config: the file and the graph id, or
 * undefined for any other reference.
 */
export function parseLangGraphReference(reference: string): { file: string; id: string } | undefined {
  const match = /^(.*(?:^|[/\\])langgraph\.json):([^/\\]+)$/u.exec(reference);
  return match === null ? undefined : { file: match[1]!, id: match[2]! };
}
