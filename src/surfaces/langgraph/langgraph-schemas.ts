import { z } from "zod";
import { AgentInvalidBodyError } from "../../errors/catalogue.js";
import { type AgentRunRequest, assertCheckpointNamed } from "../../runs/agent/agent-run-config.js";
import { AGENT_STREAM_MODES } from "../../runs/agent/agent-stream.js";
import { MULTITASK_STRATEGIES } from "../../store/agent-records.js";
import { issuePath } from "../../util/describe-issue.js";

// The bodies of the LangGraph Agent Protocol, as `@langchain/langgraph-sdk` sends them. Fields
// this server does not use are let through (a newer SDK may send more), never an error.

const metadata = z.record(z.string(), z.unknown());
const checkpoint = z.object({
  checkpoint_id: z.string().optional(),
  checkpoint_ns: z.string().optional(),
  checkpoint_map: z.record(z.string(), z.unknown()).nullish(),
});
const nodes = z.union([z.literal("*"), z.array(z.string())]);
const streamMode = z.union([z.enum(AGENT_STREAM_MODES), z.array(z.enum(AGENT_STREAM_MODES))]);

/** The longest a run may be asked to wait before it starts: 30 days. */
const MAX_AFTER_SECONDS = 30 * 24 * 3600;

const runCreate = z.object({
  assistant_id: z.string().min(1),
  input: z.unknown().optional(),
  command: z.object({ resume: z.unknown().optional(), update: z.unknown().optional(), goto: z.unknown().optional() }).nullish(),
  stream_mode: streamMode.nullish(),
  stream_subgraphs: z.boolean().nullish(),
  stream_resumable: z.boolean().nullish(),
  config: z
    .object({
      tags: z.array(z.string()).optional(),
      metadata: metadata.optional(),
      recursion_limit: z.number().int().positive().optional(),
      configurable: z.record(z.string(), z.unknown()).optional(),
    })
    .nullish(),
  context: z.unknown().optional(),
  metadata: metadata.nullish(),
  checkpoint: checkpoint.nullish(),
  checkpoint_id: z.string().nullish(),
  interrupt_before: nodes.nullish(),
  interrupt_after: nodes.nullish(),
  multitask_strategy: z.enum(MULTITASK_STRATEGIES).nullish(),
  if_not_exists: z.enum(["create", "reject"]).nullish(),
  on_completion: z.enum(["delete", "keep"]).nullish(),
  on_disconnect: z.enum(["cancel", "continue"]).nullish(),
  durability: z.enum(["sync", "async", "exit"]).nullish(),
  after_seconds: z
    .number("must be a number of seconds")
    .min(0, "must be 0 seconds or more")
    .max(MAX_AFTER_SECONDS, `must be at most ${MAX_AFTER_SECONDS} seconds (30 days)`)
    .nullish(),
  webhook: z.string().min(1).nullish(),
});

/** The times and switches of a cron beside its run's fields (`POST /runs/crons`). */
const cronTimes = {
  schedule: z.string("is required: when the cron fires, in cron syntax").min(1),
  timezone: z.string().min(1).nullish(),
  end_time: z.string().min(1).nullish(),
  on_run_completed: z.enum(["delete", "keep"]).nullish(),
  enabled: z.boolean().nullish(),
};

export const cronCreate = runCreate.extend(cronTimes);

/** What a cron's update may change (`PATCH /runs/crons/{id}`). */
export const cronUpdate = runCreate
  .pick({
    input: true,
    metadata: true,
    config: true,
    context: true,
    webhook: true,
    interrupt_before: true,
    interrupt_after: true,
    stream_mode: true,
    stream_subgraphs: true,
    stream_resumable: true,
    durability: true,
  })
  .extend({ ...cronTimes, schedule: cronTimes.schedule.nullish() });

export const cronSearch = z.object({
  assistant_id: z.string().nullish(),
  thread_id: z.string().nullish(),
  enabled: z.boolean().nullish(),
  metadata: metadata.nullish(),
  limit: z.number().int().min(1).max(1000).nullish(),
  offset: z.number().int().min(0).nullish(),
  sort_by: z.enum(["cron_id", "assistant_id", "thread_id", "created_at", "updated_at", "next_run_date", "end_time"]).nullish(),
  sort_order: z.enum(["asc", "desc"]).nullish(),
  select: z.array(z.string()).nullish(),
});

/** Parses with a schema, or throws the protocol's 422 naming the first field that is wrong. */
export function parseBody<T>(schema: z.ZodType<T>, body: unknown, what: string): T {
  const result = schema.safeParse(body ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue === undefined ? "" : issuePath(issue.path);
  throw new AgentInvalidBodyError(`The ${what} is not valid${path === "" ? "" : ` at ${path}`}: ${issue?.message ?? "unexpected shape"}.`);
}

/** A run's body, parsed into what the run engine takes; also whether the stream is resumable and what a disconnect does. */
export function parseRunCreate(body: unknown): { request: AgentRunRequest; resumable: boolean; cancelOnDisconnect: boolean } {
  const run = parseBody(runCreate, body, "run");
  const modes = run.stream_mode == null ? ["values" as const] : Array.isArray(run.stream_mode) ? run.stream_mode : [run.stream_mode];
  const point = { ...(run.checkpoint ?? {}), ...(run.checkpoint_id == null ? {} : { checkpoint_id: run.checkpoint_id }) };
  assertCheckpointNamed(point);
  assertCheckpointNamed(run.config?.configurable);
  const request: AgentRunRequest = {
    assistantId: run.assistant_id,
    ...(run.input === undefined ? {} : { input: run.input }),
    ...(run.command == null ? {} : { command: run.command }),
    streamMode: modes.length === 0 ? ["values"] : modes,
    subgraphs: run.stream_subgraphs === true,
    config: run.config ?? {},
    ...(run.context === undefined ? {} : { context: run.context }),
    metadata: run.metadata ?? {},
    ...(Object.keys(point).length === 0 ? {} : { checkpoint: point }),
    ...(run.interrupt_before == null ? {} : { interruptBefore: run.interrupt_before }),
    ...(run.interrupt_after == null ? {} : { interruptAfter: run.interrupt_after }),
    multitaskStrategy: run.multitask_strategy ?? "reject",
    ifNotExists: run.if_not_exists ?? "reject",
    onCompletion: run.on_completion ?? "delete",
    ...(run.durability == null ? {} : { durability: run.durability }),
    ...(run.after_seconds == null || run.after_seconds === 0 ? {} : { afterSeconds: run.after_seconds }),
    ...(run.webhook == null ? {} : { webhook: run.webhook }),
  };
  return { request, resumable: run.stream_resumable === true, cancelOnDisconnect: run.on_disconnect === "cancel" };
}

/** A thread's own time to live: swept after that many idle minutes (`{ ttl, strategy }`, as the SDK sends it). */
const threadTtl = z.object({
  ttl: z.number("must be a number of minutes").positive("must be more than 0 minutes"),
  strategy: z.enum(["delete", "keep_latest"], 'must be "delete" or "keep_latest"').nullish(),
});

export const threadCreate = z.object({
  thread_id: z.uuid("must be a UUID, as LangGraph's thread ids are").nullish(),
  metadata: metadata.nullish(),
  if_exists: z.enum(["raise", "do_nothing"]).nullish(),
  graph_id: z.string().nullish(),
  ttl: threadTtl.nullish(),
});

const sortOrder = z.enum(["asc", "desc"]).nullish();

export const threadSearch = z.object({
  ids: z.array(z.string()).nullish(),
  metadata: metadata.nullish(),
  values: z.record(z.string(), z.unknown()).nullish(),
  status: z.enum(["idle", "busy", "interrupted", "error"]).nullish(),
  limit: z.number().int().min(1).max(1000).nullish(),
  offset: z.number().int().min(0).nullish(),
  sort_by: z.enum(["thread_id", "status", "created_at", "updated_at", "state_updated_at"]).nullish(),
  sort_order: sortOrder,
  select: z.array(z.string()).nullish(),
});

/** `POST /threads/prune`: the threads, and what to do with them. */
export const threadPrune = z.object({
  thread_ids: z.array(z.string().min(1)).min(1, "name at least one thread").max(1000, "name at most 1000 threads at once"),
  strategy: z.enum(["delete", "keep_latest"], 'must be "delete" or "keep_latest"').nullish(),
});

export const threadPatch = z.object({ metadata: metadata.nullish(), ttl: threadTtl.nullish() });

export const stateUpdate = z.object({
  values: z.unknown().optional(),
  as_node: z.string().nullish(),
  checkpoint: checkpoint.nullish(),
  checkpoint_id: z.string().nullish(),
});

export const historyRequest = z.object({
  limit: z.number().int().min(1).max(1000).nullish(),
  before: z.union([z.string(), checkpoint]).nullish(),
  metadata: metadata.nullish(),
  checkpoint: checkpoint.nullish(),
});

export const assistantSearch = z.object({
  graph_id: z.string().nullish(),
  name: z.string().nullish(),
  metadata: metadata.nullish(),
  limit: z.number().int().min(1).max(1000).nullish(),
  offset: z.number().int().min(0).nullish(),
  sort_by: z.enum(["assistant_id", "graph_id", "name", "created_at", "updated_at"]).nullish(),
  sort_order: sortOrder,
  select: z.array(z.string()).nullish(),
});

/** An assistant's config, as LangGraph's API takes it. */
const assistantConfig = z.looseObject({
  tags: z.array(z.string()).optional(),
  recursion_limit: z.number().int().positive().optional(),
  configurable: z.record(z.string(), z.unknown()).optional(),
});

export const assistantCreate = z.object({
  assistant_id: z.uuid("must be a UUID, as LangGraph's assistant ids are").nullish(),
  graph_id: z.string("is required: the graph the assistant runs").min(1),
  config: assistantConfig.nullish(),
  context: z.record(z.string(), z.unknown()).nullish(),
  metadata: metadata.nullish(),
  if_exists: z.enum(["raise", "do_nothing"]).nullish(),
  name: z.string().nullish(),
  description: z.string().nullish(),
});

export const assistantPatch = assistantCreate.omit({ assistant_id: true, if_exists: true }).partial();

export const assistantVersions = z.object({
  metadata: metadata.nullish(),
  limit: z.number().int().min(1).max(1000).nullish(),
  offset: z.number().int().min(0).nullish(),
});

export const assistantLatest = z.object({ version: z.number("is required: the version to make current").int().min(1) });

/** A store namespace: labels that are non-empty strings without a period. */
export const namespace = z.array(
  z
    .string()
    .min(1, "a namespace label must not be empty")
    .refine((label) => !label.includes("."), "a namespace label must not contain a period"),
);

export const storePut = z.object({
  namespace: namespace.min(1, "the namespace must have at least one label"),
  key: z.string().min(1),
  value: z.record(z.string(), z.unknown()),
  index: z.unknown().optional(),
  ttl: z.number().positive("ttl must be more than 0 minutes, or null for none").nullish(),
});

export const storeDelete = z.object({ namespace: namespace.min(1, "the namespace must have at least one label"), key: z.string().min(1) });

export const storeSearch = z.object({
  namespace_prefix: namespace.nullish(),
  filter: z.record(z.string(), z.unknown()).nullish(),
  limit: z.number().int().min(1).max(1000).nullish(),
  offset: z.number().int().min(0).nullish(),
  query: z.string().nullish(),
  refresh_ttl: z.boolean().nullish(),
});

export const storeNamespaces = z.object({
  prefix: namespace.nullish(),
  suffix: namespace.nullish(),
  max_depth: z.number().int().min(1).nullish(),
  limit: z.number().int().min(1).max(1000).nullish(),
  offset: z.number().int().min(0).nullish(),
});
