import type { FastifyRequest } from "fastify";
import { AgentNotFoundError } from "../../errors/catalogue.js";
import { matchesFilters } from "../../http/langgraph-auth.js";
import type { RouteTable } from "../../http/lazy-routes.js";
import { systemAssistant } from "../../runs/agent/assistants.js";
import { graphSchemas } from "../../runs/agent/graph-schemas.js";
import type { LangGraphRoutes } from "./langgraph-routes.js";
import { assistantSearch, parseBody } from "./langgraph-schemas.js";
import { authorize, visible } from "./route-auth.js";

type AssistantParams = { Params: { assistant_id: string } };

function flag(value: unknown): boolean | undefined {
  if (value === undefined) return undefined;
  return value === "true" || value === "1";
}

/**
 * Assistants: one system assistant per model (`graph_id` is the model id), read-only. The
 * model id is accepted wherever an assistant id is.
 */
export function registerAssistantRoutes(on: RouteTable, routes: LangGraphRoutes): void {
  const { registry } = routes;
  function matching(
    request: FastifyRequest,
    body: { graph_id?: string | null; name?: string | null; metadata?: Record<string, unknown> | null },
  ) {
    const all = routes.visible(request).map((model) => systemAssistant(registry, model, routes.startedAt));
    return all.filter(
      (assistant) =>
        (body.graph_id == null || assistant.graph_id === body.graph_id) &&
        (body.name == null || String(assistant.name).includes(body.name)) &&
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
    return visible(matching(request, body), filters);
  }

  /** The assistant the path names, if the project's `assistants:read` handler lets the caller see it (404 otherwise). */
  async function readable(request: FastifyRequest<AssistantParams>): Promise<string> {
    const model = routes.modelOf(request, request.params.assistant_id);
    const { filters } = await authorize(routes, request, "assistants:read", { assistant_id: request.params.assistant_id });
    const assistant = systemAssistant(registry, model, routes.startedAt);
    if (!matchesFilters(assistant.metadata as Record<string, unknown>, filters))
      throw new AgentNotFoundError("assistant", request.params.assistant_id);
    return model;
  }

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

  on.get<AssistantParams>("/assistants/:assistant_id", async (request) =>
    systemAssistant(registry, await readable(request), routes.startedAt),
  );

  on.get<AssistantParams & { Querystring: { xray?: string } }>("/assistants/:assistant_id/graph", async (request) => {
    const { graph } = await routes.runs.graphOf(await readable(request));
    const xray = request.query.xray;
    const depth = xray !== undefined && /^\d+$/u.test(xray) ? Number(xray) : flag(xray);
    return (await graph.getGraphAsync(depth === undefined ? {} : { xray: depth })).toJSON();
  });

  on.get<AssistantParams>("/assistants/:assistant_id/schemas", async (request) => {
    const { model, graph } = await routes.runs.graphOf(await readable(request));
    return { graph_id: model, ...(await graphSchemas(graph)) };
  });

  on.get<AssistantParams & { Params: { namespace?: string }; Querystring: { recurse?: string } }>(
    "/assistants/:assistant_id/subgraphs/:namespace?",
    async (request) => {
      const { graph } = await routes.runs.graphOf(await readable(request));
      const subgraphs: Record<string, unknown> = {};
      for await (const [namespace, subgraph] of graph.getSubgraphsAsync(request.params.namespace, flag(request.query.recurse) ?? false)) {
        subgraphs[namespace] = { graph_id: namespace, ...(await graphSchemas(subgraph as never)) };
      }
      return subgraphs;
    },
  );
}
