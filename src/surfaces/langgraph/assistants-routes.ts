import type { FastifyRequest } from "fastify";
import { AgentConflictError, AgentNotFoundError } from "../../errors/catalogue.js";
import { matchesFilters } from "../../http/langgraph-auth.js";
import type { RouteTable } from "../../http/lazy-routes.js";
import { graphOriginOf } from "../../registry/graph-origin.js";
import { assistantJson } from "../../runs/agent/agent-assistants.js";
import { backendCall } from "../../runs/agent/agent-run-config.js";
import { systemAssistant } from "../../runs/agent/assistants.js";
import { graphSchemas } from "../../runs/agent/graph-schemas.js";
import { staticSchemas } from "../../runs/agent/static-schemas.js";
import type { LangGraphRoutes } from "./langgraph-routes.js";
import { assistantCreate, assistantLatest, assistantPatch, assistantSearch, assistantVersions, parseBody } from "./langgraph-schemas.js";
import { authorize, visible } from "./route-auth.js";

type AssistantParams = { Params: { assistant_id: string } };

function flag(value: unknown): boolean | undefined {
  if (value === undefined) return undefined;
  return value === "true" || value === "1";
}

/**
 * Assistants: one system assistant per model (`graph_id` is the model id; the model id is
 * accepted wherever an assistant id is), fixed, and the ones clients make, in versions.
 */
export function registerAssistantRoutes(on: RouteTable, routes: LangGraphRoutes): void {
  const { assistants } = routes;
  const backend = <T>(operation: () => Promise<T>) => backendCall("the assistant records", routes.backendTimeoutMs, operation);

  /** Every assistant the caller's key may use: the models' system assistants and the scope's own. */
  async function every(request: FastifyRequest, scope: string): Promise<Record<string, unknown>[]> {
    const models = routes.visible(request);
    const system = models.map((model) => systemAssistant(routes.registry, model, routes.startedAt));
    const custom = (await backend(() => assistants.custom(scope))).filter((record) => models.includes(record.graph_id));
    return [...system, ...custom.map(assistantJson)];
  }

  async function matching(
    request: FastifyRequest,
    body: { graph_id?: string | null; name?: string | null; metadata?: Record<string, unknown> | null },
  ) {
    const all = await every(request, await routes.scopeOf(request));
    return all.filter(
      (assistant) =>
        (body.graph_id == null || assistant.graph_id === body.graph_id) &&
        (body.name == null || String(assistant.name).toLowerCase().includes(body.name.toLowerCase())) &&
        (body.metadata == null ||
          Object.entries(body.metadata).every(
            ([key, value]) => JSON.stringify((assistant.metadata as Record<string, unknown>)[key]) === JSON.stringify(value),
          )),
    );
  }

  /** The assistants a search finds that the project's `assistants:search` handler lets the caller see. */
  async function searched(
    request: FastifyRequest,
    body: Parameters<typeof matching>[1] & { limit?: number | null; offset?: number | null },
  ) {
    const { filters } = await authorize(routes, request, "assistants:search", {
      graph_id: body.graph_id ?? undefined,
      metadata: body.metadata ?? undefined,
      limit: body.limit ?? undefined,
      offset: body.offset ?? undefined,
    });
    return visible(await matching(request, body), filters);
  }

  /** The assistant the path names, if the project's `assistants:<action>` handler lets the caller see it (404 otherwise). */
  async function readable(request: FastifyRequest<AssistantParams>, action: "read" | "update" | "delete" = "read", value = {}) {
    const scope = await routes.scopeOf(request);
    const id = request.params.assistant_id;
    const { filters } = await authorize(routes, request, `assistants:${action}`, { assistant_id: id, ...value });
    const found = await backend(() => assistants.find(scope, id));
    if (
      found === undefined ||
      !routes.visible(request).includes(found.model) ||
      !matchesFilters(found.json.metadata as Record<string, unknown>, filters)
    )
      throw new AgentNotFoundError("assistant", id);
    return { ...found, scope };
  }

  on.post("/assistants", async (request) => {
    const sent = parseBody(assistantCreate, request.body, "assistant");
    const scope = await routes.scopeOf(request);
    // The project's `assistants:create` handler may add to the metadata (an owner).
    const { filters, value } = await authorize(routes, request, "assistants:create", { ...sent, metadata: sent.metadata ?? {} });
    const body = parseBody(assistantCreate, value, "assistant");
    const existing = body.assistant_id == null ? undefined : await backend(() => assistants.find(scope, body.assistant_id!));
    if (existing !== undefined && !matchesFilters(existing.json.metadata as Record<string, unknown>, filters)) {
      throw new AgentConflictError(`Assistant ${body.assistant_id} already exists.`);
    }
    return assistantJson(await backend(() => assistants.create(scope, body, routes.visible(request))));
  });

  on.patch<AssistantParams>("/assistants/:assistant_id", async (request) => {
    const sent = parseBody(assistantPatch, request.body, "assistant");
    const { scope } = await readable(request, "update", sent);
    return assistantJson(await backend(() => assistants.patch(scope, request.params.assistant_id, sent, routes.visible(request))));
  });

  on.delete<AssistantParams>("/assistants/:assistant_id", async (request, reply) => {
    const { scope } = await readable(request, "delete");
    await backend(() => assistants.delete(scope, request.params.assistant_id));
    return reply.status(204).send();
  });

  on.post<AssistantParams>("/assistants/:assistant_id/latest", async (request) => {
    const { version } = parseBody(assistantLatest, request.body, "version");
    const { scope } = await readable(request, "update", { version });
    return assistantJson(await backend(() => assistants.setLatest(scope, request.params.assistant_id, version)));
  });

  on.post<AssistantParams>("/assistants/:assistant_id/versions", async (request) => {
    const body = parseBody(assistantVersions, request.body, "version search");
    const found = await readable(request);
    const all =
      found.custom === undefined
        ? [found.json]
        : (await backend(() => assistants.records.versions(found.scope, found.custom!.assistant_id))).map(assistantJson);
    const offset = body.offset ?? 0;
    const wanted = all.filter(
      (version) =>
        body.metadata == null ||
        Object.entries(body.metadata).every(
          ([key, value]) => JSON.stringify((version.metadata as Record<string, unknown>)[key]) === JSON.stringify(value),
        ),
    );
    return wanted.slice(offset, offset + (body.limit ?? 10));
  });

  on.post("/assistants/search", async (request, reply) => {
    const body = parseBody(assistantSearch, request.body, "search");
    const found = await searched(request, body);
    const key = body.sort_by ?? "created_at";
    const order = body.sort_order ?? "desc";
    found.sort((a, b) => {
      const compared = String(a[key]).localeCompare(String(b[key]));
      return order === "asc" ? compared : -compared;
    });
    const offset = body.offset ?? 0;
    const limit = body.limit ?? 10;
    reply.header("x-pagination-total", String(found.length));
    if (offset + limit < found.length) reply.header("x-pagination-next", String(offset + limit));
    const page = found.slice(offset, offset + limit);
    const select = body.select;
    return select == null
      ? page
      : page.map((assistant) => Object.fromEntries(Object.entries(assistant).filter(([field]) => select.includes(field))));
  });

  on.post("/assistants/count", async (request) => (await searched(request, parseBody(assistantSearch, request.body, "count"))).length);

  on.get<AssistantParams>("/assistants/:assistant_id", async (request) => (await readable(request)).json);

  on.get<AssistantParams & { Querystring: { xray?: string } }>("/assistants/:assistant_id/graph", async (request) => {
    const { graph } = await routes.runs.graphOf((await readable(request)).model);
    const xray = request.query.xray;
    const depth = xray !== undefined && /^\d+$/u.test(xray) ? Number(xray) : flag(xray);
    return (await graph.getGraphAsync(depth === undefined ? {} : { xray: depth })).toJSON();
  });

  on.get<AssistantParams>("/assistants/:assistant_id/schemas", async (request) => {
    const { model, graph } = await routes.runs.graphOf((await readable(request)).model);
    // The file and export the config named: what LangGraph's reader of TypeScript types reads.
    const source = graphOriginOf(routes.registry.getGraph(model).graph);
    const warn = (error: unknown) =>
      request.log.warn({ err: error, model }, "could not read the graph's schemas from its TypeScript types");
    return { graph_id: model, ...(await graphSchemas(graph, source === undefined ? undefined : () => staticSchemas(source, warn))) };
  });

  on.get<AssistantParams & { Params: { namespace?: string }; Querystring: { recurse?: string } }>(
    "/assistants/:assistant_id/subgraphs/:namespace?",
    async (request) => {
      const { graph } = await routes.runs.graphOf((await readable(request)).model);
      const subgraphs: Record<string, unknown> = {};
      for await (const [namespace, subgraph] of graph.getSubgraphsAsync(request.params.namespace, flag(request.query.recurse) ?? false)) {
        subgraphs[namespace] = { graph_id: namespace, ...(await graphSchemas(subgraph as never)) };
      }
      return subgraphs;
    },
  );
}
