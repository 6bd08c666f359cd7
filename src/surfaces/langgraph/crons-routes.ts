import { v7 as uuid7 } from "@langchain/core/utils/uuid";
import type { FastifyRequest } from "fastify";
import type { z } from "zod";
import { AgentConflictError, AgentNotFoundError } from "../../errors/catalogue.js";
import { matchesFilters } from "../../http/langgraph-auth.js";
import type { RouteTable } from "../../http/lazy-routes.js";
import { backendCall } from "../../runs/agent/agent-run-config.js";
import { checkCronTimes, nextFiring } from "../../runs/agent/cron-scheduler.js";
import { type CronRecord, MEMORY_CRON_LIMIT, MemoryCronRecords } from "../../store/cron-records.js";
import type { LangGraphRoutes } from "./langgraph-routes.js";
import { cronCreate, cronSearch, cronUpdate, parseBody, parseRunCreate } from "./langgraph-schemas.js";
import { authorize, guardThread, visible } from "./route-auth.js";

type CronParams = { Params: { cron_id: string } };
type ThreadParams = { Params: { thread_id: string } };

/** A cron's own fields; the rest of a body is the run each firing makes. */
const CRON_FIELDS = new Set(["assistant_id", "schedule", "timezone", "end_time", "on_run_completed", "enabled", "thread_id"]);

/** The run fields of a cron's body (what each firing sends as a run), without what is not set. */
function payloadOf(body: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).filter(([key, value]) => !CRON_FIELDS.has(key) && value != null));
}

/** A cron as the protocol shows it: its record without the tenant, and when it fires next (null when it will not). */
function cronJson(record: CronRecord): Record<string, unknown> {
  const { scope: _scope, last_fired_at: _fired, ...shown } = record;
  const next = record.enabled ? nextFiring(record) : undefined;
  return { ...shown, next_run_date: next?.toISOString() ?? null };
}

/**
 * Crons: a run made on a schedule, on a thread (`POST /threads/{id}/runs/crons`) or on a new
 * thread each time (`POST /runs/crons`); searched, counted, updated (`enabled: false` pauses
 * one) and deleted. Each tenant has its own; a project's `Auth` decides by their metadata.
 */
export function registerCronRoutes(on: RouteTable, routes: LangGraphRoutes): void {
  const { records, scheduler, maxPerTenant } = routes.crons;

  /**
   * One more enabled cron for the caller must stay within `server.langgraph.maxCronsPerTenant`
   * (its tenant's, or under a project's `Auth` its user's); a 409 saying what to do otherwise.
   */
  async function assertRoomForCron(request: FastifyRequest, scope: string, except?: string) {
    const user = request.chatServeCaller?.authUser?.user.identity ?? null;
    const enabled = (await backend(() => records.list(scope))).filter(
      (cron) => cron.enabled && cron.cron_id !== except && (user === null || cron.user_id === user),
    );
    if (enabled.length >= maxPerTenant) {
      throw new AgentConflictError(
        `You have ${enabled.length} enabled crons, the most this server allows (server.langgraph.maxCronsPerTenant is ${maxPerTenant}): delete or disable one first.`,
      );
    }
  }
  const backend = <T>(operation: () => Promise<T>) => backendCall("the cron records", routes.backendTimeoutMs, operation);

  /** The run a cron would make, checked now as a run's request is: its fields, its assistant, its webhook. */
  async function checkRun(request: FastifyRequest, scope: string, assistantId: string, payload: Record<string, unknown>) {
    const { request: run } = parseRunCreate({ ...payload, assistant_id: assistantId });
    await routes.prepareRun(request, scope, run);
  }

  async function create(request: FastifyRequest, threadId: string | null) {
    const sent = parseBody(cronCreate, request.body, "cron");
    const scope = await routes.scopeOf(request);
    // The project's `crons:create` handler may add to the metadata (an owner).
    const { value } = await authorize(routes, request, "crons:create", { ...sent, metadata: sent.metadata ?? {}, thread_id: threadId });
    const { thread_id: _thread, ...asked } = value as z.output<typeof cronCreate> & { thread_id?: unknown };
    const body = parseBody(cronCreate, asked, "cron");
    checkCronTimes(body);
    if (threadId !== null) {
      await guardThread(routes, request, scope, threadId, "update");
      await routes.threads.record(scope, threadId);
    }
    const payload = payloadOf(body);
    await checkRun(request, scope, body.assistant_id, payload);
    if (body.enabled !== false) await assertRoomForCron(request, scope);
    if (records instanceof MemoryCronRecords && records.full) {
      throw new AgentConflictError(
        `This server keeps at most ${MEMORY_CRON_LIMIT} crons in memory; delete some, or keep them in Postgres (store: { kind: "postgres" }).`,
      );
    }
    const at = new Date().toISOString();
    const record: CronRecord = {
      cron_id: uuid7(),
      scope,
      assistant_id: body.assistant_id,
      thread_id: threadId,
      schedule: body.schedule,
      timezone: body.timezone ?? null,
      end_time: body.end_time == null ? null : new Date(body.end_time).toISOString(),
      on_run_completed: threadId === null ? (body.on_run_completed ?? "delete") : null,
      payload,
      metadata: body.metadata ?? {},
      enabled: body.enabled ?? true,
      user_id: request.chatServeCaller?.authUser?.user.identity ?? null,
      created_at: at,
      updated_at: at,
    };
    await backend(() => records.put(record));
    try {
      await backend(() => scheduler.arm(record));
    } catch (error) {
      // Not scheduled: not made.
      await backend(() => records.delete(scope, record.cron_id)).catch(() => {});
      throw error;
    }
    return cronJson(record);
  }

  /** The cron the path names, if the project's `crons:<action>` handler lets the caller see it (404 otherwise). */
  async function readable(request: FastifyRequest<CronParams>, action: "read" | "update" | "delete", value = {}) {
    const scope = await routes.scopeOf(request);
    const id = request.params.cron_id;
    const { filters } = await authorize(routes, request, `crons:${action}`, { cron_id: id, ...value });
    const record = await backend(() => records.get(scope, id));
    if (record === undefined || !matchesFilters(record.metadata, filters)) throw new AgentNotFoundError("cron", id);
    return record;
  }

  /** The scope's crons that match a search's filters and that the `crons:search` handler lets the caller see. */
  async function matching(request: FastifyRequest, body: z.output<typeof cronSearch>) {
    const scope = await routes.scopeOf(request);
    const { filters } = await authorize(routes, request, "crons:search", {
      assistant_id: body.assistant_id ?? undefined,
      thread_id: body.thread_id ?? undefined,
      limit: body.limit ?? undefined,
      offset: body.offset ?? undefined,
    });
    const all = await backend(() => records.list(scope));
    const found = all.filter(
      (cron) =>
        (body.assistant_id == null || cron.assistant_id === body.assistant_id) &&
        (body.thread_id == null || cron.thread_id === body.thread_id) &&
        (body.enabled == null || cron.enabled === body.enabled) &&
        (body.metadata == null ||
          Object.entries(body.metadata).every(([key, value]) => JSON.stringify(cron.metadata[key]) === JSON.stringify(value))),
    );
    return visible(found, filters).map(cronJson);
  }

  on.post("/runs/crons", async (request) => create(request, null));
  on.post<ThreadParams>("/threads/:thread_id/runs/crons", async (request) => create(request, request.params.thread_id));

  on.post("/runs/crons/search", async (request, reply) => {
    const body = parseBody(cronSearch, request.body, "search");
    const found = await matching(request, body);
    const key = body.sort_by ?? "created_at";
    const order = body.sort_order ?? "desc";
    found.sort((a, b) => {
      const compared = String(a[key] ?? "").localeCompare(String(b[key] ?? ""));
      return order === "asc" ? compared : -compared;
    });
    const offset = body.offset ?? 0;
    const limit = body.limit ?? 10;
    reply.header("x-pagination-total", String(found.length));
    const page = found.slice(offset, offset + limit);
    const select = body.select;
    return select == null ? page : page.map((cron) => Object.fromEntries(Object.entries(cron).filter(([field]) => select.includes(field))));
  });

  on.post("/runs/crons/count", async (request) => (await matching(request, parseBody(cronSearch, request.body, "count"))).length);

  on.patch<CronParams>("/runs/crons/:cron_id", async (request) => {
    const sent = parseBody(cronUpdate, request.body, "cron update");
    const current = await readable(request, "update", sent);
    checkCronTimes({ ...(sent.schedule == null ? {} : { schedule: sent.schedule }), timezone: sent.timezone, end_time: sent.end_time });
    const payload = { ...current.payload, ...payloadOf(sent) };
    await checkRun(request, current.scope, current.assistant_id, payload);
    if (sent.enabled === true && !current.enabled) await assertRoomForCron(request, current.scope, current.cron_id);
    const record: CronRecord = {
      ...current,
      payload,
      ...(sent.schedule == null ? {} : { schedule: sent.schedule }),
      ...(sent.timezone == null ? {} : { timezone: sent.timezone }),
      ...(sent.end_time == null ? {} : { end_time: new Date(sent.end_time).toISOString() }),
      ...(sent.on_run_completed == null || current.thread_id !== null ? {} : { on_run_completed: sent.on_run_completed }),
      ...(sent.enabled == null ? {} : { enabled: sent.enabled }),
      ...(sent.metadata == null ? {} : { metadata: { ...current.metadata, ...sent.metadata } }),
      updated_at: new Date().toISOString(),
    };
    // A new schedule checked in the zone it is read in.
    checkCronTimes({ schedule: record.schedule, timezone: record.timezone });
    await backend(() => records.put(record));
    await backend(() => scheduler.arm(record));
    return cronJson(record);
  });

  on.delete<CronParams>("/runs/crons/:cron_id", async (request, reply) => {
    const cron = await readable(request, "delete");
    await backend(() => scheduler.disarm(cron.scope, cron.cron_id));
    await backend(() => records.delete(cron.scope, cron.cron_id));
    return reply.status(204).send();
  });
}
