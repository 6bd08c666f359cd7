import { z } from "zod";
import { envTemplateProblem } from "../util/env-template.js";
import { type Referable, valueOrReference } from "./config-values.js";

// The settings of a LangGraph project that LangGraph's Agent Server reads from `langgraph.json`
// (its `http`, `store.index` and `checkpointer.ttl`), under the names of a `chat-serve.config.ts`.

/** `checkpointer.ttl`: threads idle this many minutes are swept, every `sweepIntervalMinutes`. */
export const threadTtlSchema = z.strictObject({
  strategy: z.enum(["delete", "keep_latest"], 'must be "delete" or "keep_latest"').default("delete"),
  defaultTtl: z.number("must be a number of minutes").positive("must be more than 0 minutes").optional(),
  sweepIntervalMinutes: z.number("must be a number of minutes").positive("must be more than 0 minutes").default(5),
});

/**
 * Threads of the Agent Protocol left idle `defaultTtl` minutes are deleted with their runs and
 * checkpoints, or with `strategy: "keep_latest"` cut to their latest checkpoint (langgraph.json's
 * `checkpointer.ttl`; a thread's own `ttl` wins), swept every `sweepIntervalMinutes` (default 5)
 * by one process of the deployment.
 */
export interface ThreadTtlConfig {
  strategy?: "delete" | "keep_latest";
  defaultTtl?: number;
  sweepIntervalMinutes?: number;
}

/** `http`: the project's own routes. */
export const httpSchema = z.strictObject({
  app: valueOrReference("a Hono app or an object with a fetch(request) method"),
  enableCustomRouteAuth: z.boolean().default(false),
  prefix: z.string().optional(),
});

/**
 * A project's own routes beside chat-serve's (`langgraph.json`'s `http.app`): a Hono app, or
 * anything with a Fetch API `fetch(request)`, as a value or a `"./app.ts:app"` reference.
 * chat-serve's own routes come first. `enableCustomRouteAuth`: behind the server's auth too.
 * `prefix`: served under it, which the app does not see (`/api/hello` reaches its `/hello`).
 */
export interface HttpConfig {
  app: Referable<object>;
  enableCustomRouteAuth?: boolean;
  prefix?: string;
}

/** `ui`: a graph's generative UI components, as `langgraph.json`'s `ui` (graph id → `./src/ui.tsx`). */
export const uiSchema = z.record(
  z.string().min(1),
  z.string("must be the path of the file that exports the graph's components, such as './src/agent/ui.tsx'").min(1),
);

/** `uiConfig`: `langgraph.json`'s `ui_config`; `shared` names the packages the page provides instead of the bundle. */
export const uiConfigSchema = z.strictObject({ shared: z.array(z.string().min(1)).optional() });

/** Header names, or patterns with `*` for any run of characters (`x-org-*`). */
export const headerPatterns = z.array(
  z
    .string()
    .min(1)
    .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/u, "must be a header name, or a pattern with * (no other pattern characters)"),
);

/** `server.langgraph`: the Agent Protocol's place, transport, and what langgraph.json's `http` says of it (`AgentProtocolSettings`). */
export const agentProtocolSettingsSchema = z.strictObject({
  prefix: z.string().optional(),
  websocket: z.boolean().optional(),
  disableAssistants: z.boolean().optional(),
  disableThreads: z.boolean().optional(),
  disableRuns: z.boolean().optional(),
  disableStore: z.boolean().optional(),
  disableMeta: z.boolean().optional(),
  configurableHeaders: z.strictObject({ includes: headerPatterns.optional(), excludes: headerPatterns.optional() }).optional(),
  disableWebhooks: z.boolean().optional(),
  maxCronsPerTenant: z.int().min(1).optional(),
  webhooks: z
    .strictObject({
      requireHttps: z.boolean().optional(),
      allowedDomains: z.array(z.string().min(1)).optional(),
      allowedPorts: z.array(z.int().min(1).max(65_535)).optional(),
      maxUrlLength: z.int().min(1).optional(),
      disableLoopback: z.boolean().optional(),
      headers: z.record(z.string(), z.string()).optional(),
      envPrefix: z.string().min(1).optional(),
      secret: z.string().min(1).optional(),
    })
    .superRefine((webhooks, context) => {
      for (const [name, value] of Object.entries(webhooks.headers ?? {})) {
        const problem = envTemplateProblem(value, webhooks.envPrefix ?? "LG_WEBHOOK_");
        if (problem !== undefined) context.addIssue({ code: "custom", path: ["headers", name], message: problem });
      }
    })
    .optional(),
});

/** A regular expression's source, checked. */
export const regexSource = z
  .string()
  .min(1)
  .refine((source) => {
    try {
      new RegExp(source, "u");
      return true;
    } catch {
      return false;
    }
  }, "must be a regular expression");

/** `server.cors`: who may call from a browser, and how. */
export const corsSchema = z
  .strictObject({
    origins: z.array(z.string().min(1)).min(1, "must list at least one origin").optional(),
    originRegex: regexSource.optional(),
    methods: z.array(z.string().min(1)).optional(),
    headers: z.array(z.string().min(1)).optional(),
    exposeHeaders: z.array(z.string().min(1)).optional(),
    credentials: z.boolean().optional(),
    maxAge: z.int().min(0).optional(),
  })
  .refine((cors) => cors.origins !== undefined || cors.originRegex !== undefined, { error: "needs origins or originRegex" });

/** `graphStore`: LangGraph's store, made semantic by `index`. */
export const graphStoreSchema = z.strictObject({
  index: z
    .strictObject({
      embed: valueOrReference("LangChain embeddings, a function of texts to vectors, or 'provider:model'"),
      dims: z.int("must be a whole number: the embeddings' dimensions").min(1),
      fields: z.array(z.string().min(1)).min(1, "must list at least one field; leave it out for the whole value").optional(),
    })
    .optional(),
  ttl: z
    .strictObject({
      defaultTtl: z.number("must be a number of minutes").positive("must be more than 0 minutes").optional(),
      refreshOnRead: z.boolean("must be true or false").default(true),
      sweepIntervalMinutes: z.number("must be a number of minutes").positive("must be more than 0 minutes").default(60),
    })
    .optional(),
});

/**
 * LangGraph's store, which graphs read through `config.store` (`langgraph.json`'s `store`):
 * `index` makes `search({ query })` semantic (`embed`: LangChain embeddings, a function of
 * texts to vectors, a `"./embed.ts:export"` reference or `"openai:text-embedding-3-small"`).
 */
export interface GraphStoreConfig {
  index?: { embed: Referable<object> | string; dims: number; fields?: string[] };
  /**
   * Items' time to live (`store.ttl`): `defaultTtl` minutes for an item put without its own
   * `ttl`; a read starts it again unless `refreshOnRead: false`; on Postgres the store sweeps
   * every `sweepIntervalMinutes` (default 60), in memory the next store call deletes what is past.
   */
  ttl?: { defaultTtl?: number; refreshOnRead?: boolean; sweepIntervalMinutes?: number };
}
