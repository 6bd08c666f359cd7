import type { BaseStore, Item } from "@langchain/langgraph";
import { z } from "zod";
import { AgentInvalidBodyError, AgentNotFoundError, AuthRefusedError } from "../../errors/catalogue.js";
import { type AuthFilters, matchesFilters } from "../../http/langgraph-auth.js";
import type { RouteTable } from "../../http/lazy-routes.js";
import { backendCall } from "../../runs/agent/agent-run-config.js";
import { TENANT_LABEL, tenantPrefix } from "../../store/tenant-store.js";
import { keptPage } from "../../util/kept-page.js";
import type { LangGraphRoutes } from "./langgraph-routes.js";
import { namespace as namespaceSchema, parseBody, storeDelete, storeNamespaces, storePut, storeSearch } from "./langgraph-schemas.js";
import { authorize } from "./route-auth.js";

/** An item asked for (as a `store:get` handler may have changed it). */
const storeGet = z.object({ namespace: namespaceSchema, key: z.string().min(1) });

/** Whether an item passes a `store:*` handler's filters: its value's fields, its `namespace` and `key`, as LangGraph's server reads them. */
function itemPasses(namespace: readonly string[], key: string | undefined, value: unknown, filters: AuthFilters | undefined): boolean {
  if (filters === undefined) return true;
  const fields = typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
  return matchesFilters({ ...fields, namespace: [...namespace], ...(key === undefined ? {} : { key }) }, filters);
}

/** A namespace of the request's tenant, as the store keeps it (the graphs' `config.store` sees the same: tenant-store.ts). */
function inScope(scope: string, namespace: readonly string[]): string[] {
  if (namespace[0] === TENANT_LABEL) throw new AgentInvalidBodyError(`The namespace label '${TENANT_LABEL}' is reserved by the server.`);
  return [...tenantPrefix(scope), ...namespace];
}

/** A query parameter given at most once (`namespace=a.b`, not `namespace=a&namespace=b`). */
function onceInQuery(value: string | string[] | undefined, name: string): string | undefined {
  if (!Array.isArray(value)) return value;
  throw new AgentInvalidBodyError(
    `Give the query parameter '${name}' once${name === "namespace" ? ", its labels joined by dots (namespace=a.b)" : ""}.`,
  );
}

/** The default scope (no tenants) never sees a tenant's namespaces. */
function visibleTo(scope: string, namespace: readonly string[]): boolean {
  return scope !== "default" || namespace[0] !== TENANT_LABEL;
}

function outOfScope(scope: string, namespace: readonly string[]): string[] {
  return scope === "default" ? [...namespace] : namespace.slice(2);
}

function itemJson(scope: string, item: Item & { score?: number }): Record<string, unknown> {
  return {
    namespace: outOfScope(scope, item.namespace),
    key: item.key,
    value: item.value,
    created_at: item.createdAt,
    updated_at: item.updatedAt,
    ...(item.score === undefined ? {} : { score: item.score }),
  };
}

/**
 * The store graphs read through `config.store` / `getStore()`: put, get, delete and search
 * items, list namespaces. A tenant's requests see only the tenant's own namespaces.
 */
export function registerStoreRoutes(on: RouteTable, routes: LangGraphRoutes, store: BaseStore): void {
  const call = <T>(operation: () => Promise<T>): Promise<T> =>
    backendCall("the store", routes.backendTimeoutMs, async () => {
      try {
        return await operation();
      } catch (error) {
        // LangGraph's own rules for namespaces (no colons, no `langgraph` root label): the client's to fix.
        if (error instanceof Error && error.name === "InvalidNamespaceError") throw new AgentInvalidBodyError(error.message);
        throw error;
      }
    });

  /** The item a write names, if there is one: 404 when it is there and the handler's filters do not let the caller see it. */
  async function existingPasses(scope: string, item: { namespace: string[]; key: string }, filters: AuthFilters) {
    const existing = await call(() => store.get(inScope(scope, item.namespace), item.key));
    if (existing !== null && !itemPasses(item.namespace, item.key, existing.value, filters)) throw new AgentNotFoundError("item", item.key);
    return existing;
  }

  on.put("/store/items", async (request, reply) => {
    const sent = parseBody(storePut, request.body, "item");
    const scope = await routes.scopeOf(request);
    const { filters, value } = await authorize(routes, request, "store:put", { ...sent });
    const body = parseBody(storePut, value, "item");
    if (filters !== undefined) {
      await existingPasses(scope, body, filters);
      if (!itemPasses(body.namespace, body.key, body.value, filters)) throw new AuthRefusedError(403, "Not authorized", {});
    }
    // `index`: false leaves the item out of a semantic store's index, a list of fields indexes those.
    const index =
      body.index === false || (Array.isArray(body.index) && body.index.every((field) => typeof field === "string"))
        ? body.index
        : undefined;
    // `ttl`: the item's own time to live in minutes (null: none; absent: the store's default).
    const put = {
      namespace: inScope(scope, body.namespace),
      key: body.key,
      value: body.value,
      ...(index === undefined ? {} : { index: index as false | string[] }),
      ...(body.ttl === undefined ? {} : { options: { ttl: body.ttl } }),
    };
    await call(() => store.batch([put]));
    return reply.status(204).send();
  });

  on.get<{ Querystring: { namespace?: string | string[]; key?: string | string[]; refresh_ttl?: string | string[] } }>(
    "/store/items",
    async (request) => {
      const key = onceInQuery(request.query.key, "key");
      if (key === undefined || key === "") throw new AgentInvalidBodyError("Name the item: the query needs a key.");
      const labels = parseBody(
        namespaceSchema,
        (onceInQuery(request.query.namespace, "namespace") ?? "").split(".").filter((label) => label !== ""),
        "namespace",
      );
      const scope = await routes.scopeOf(request);
      const { filters, value } = await authorize(routes, request, "store:get", { namespace: labels, key });
      const asked = parseBody(storeGet, value, "item");
      // `refresh_ttl=false`: this read leaves the item's time to live as it is.
      const refresh = onceInQuery(request.query.refresh_ttl, "refresh_ttl");
      const get = {
        namespace: inScope(scope, asked.namespace),
        key: asked.key,
        ...(refresh === undefined ? {} : { refreshTtl: refresh !== "false" }),
      };
      const [item] = (await call(() => store.batch([get]))) as [Item | null];
      if (item === null || !itemPasses(asked.namespace, asked.key, item.value, filters)) throw new AgentNotFoundError("item", asked.key);
      return itemJson(scope, item);
    },
  );

  on.delete("/store/items", async (request, reply) => {
    const sent = parseBody(storeDelete, request.body, "item");
    const scope = await routes.scopeOf(request);
    const { filters, value } = await authorize(routes, request, "store:delete", { ...sent });
    const body = parseBody(storeDelete, value, "item");
    if (filters !== undefined) {
      const existing = await existingPasses(scope, body, filters);
      if (existing === null && !itemPasses(body.namespace, body.key, undefined, filters))
        throw new AuthRefusedError(403, "Not authorized", {});
    }
    await call(() => store.delete(inScope(scope, body.namespace), body.key));
    return reply.status(204).send();
  });

  on.post("/store/items/search", async (request) => {
    const body = parseBody(storeSearch, request.body, "search");
    const scope = await routes.scopeOf(request);
    const { filters, value } = await authorize(routes, request, "store:search", {
      namespace: body.namespace_prefix ?? [],
      filter: body.filter ?? undefined,
      limit: body.limit ?? 10,
      offset: body.offset ?? 0,
      query: body.query ?? undefined,
    });
    const prefix = inScope(scope, parseBody(namespaceSchema, value.namespace, "namespace"));
    const items = await keptPage(
      (offset, limit) =>
        call(async () => {
          const search = {
            namespacePrefix: prefix,
            ...(body.filter == null ? {} : { filter: body.filter }),
            limit,
            offset,
            ...(body.query == null ? {} : { query: body.query }),
            ...(body.refresh_ttl == null ? {} : { refreshTtl: body.refresh_ttl }),
          };
          const [found] = (await store.batch([search])) as [(Item & { score?: number })[]];
          return found;
        }),
      (item) => visibleTo(scope, item.namespace) && itemPasses(outOfScope(scope, item.namespace), item.key, item.value, filters),
      body.offset ?? 0,
      body.limit ?? 10,
    );
    return { items: items.map((item) => itemJson(scope, item)) };
  });

  on.post("/store/namespaces", async (request) => {
    const body = parseBody(storeNamespaces, request.body, "namespace listing");
    const scope = await routes.scopeOf(request);
    const { filters, value } = await authorize(routes, request, "store:list_namespaces", {
      namespace: body.prefix ?? undefined,
      suffix: body.suffix ?? undefined,
      max_depth: body.max_depth ?? undefined,
      limit: body.limit ?? 100,
      offset: body.offset ?? 0,
    });
    const prefix = inScope(scope, parseBody(namespaceSchema, value.namespace ?? [], "namespace"));
    // A listing without a prefix gave the handler no namespace to check: each namespace it would
    // list is then put to the handler as the prefix of its own listing, and one it refuses is left out.
    const handlerSees = async (labels: string[]): Promise<boolean> => {
      if (routes.auth === undefined || value.namespace != null) return true;
      try {
        const each = await authorize(routes, request, "store:list_namespaces", { namespace: labels, suffix: body.suffix ?? undefined });
        return itemPasses(labels, undefined, undefined, each.filters);
      } catch (error) {
        if (error instanceof AuthRefusedError) return false;
        throw error;
      }
    };
    const depth = body.max_depth == null ? undefined : body.max_depth + (scope === "default" ? 0 : 2);
    const namespaces = await keptPage(
      (offset, limit) =>
        call(() =>
          store.listNamespaces({
            ...(prefix.length === 0 ? {} : { prefix }),
            ...(body.suffix == null ? {} : { suffix: body.suffix }),
            ...(depth === undefined ? {} : { maxDepth: depth }),
            limit,
            offset,
          }),
        ),
      async (labels) =>
        visibleTo(scope, labels) &&
        itemPasses(outOfScope(scope, labels), undefined, undefined, filters) &&
        (await handlerSees(outOfScope(scope, labels))),
      body.offset ?? 0,
      body.limit ?? 100,
    );
    return { namespaces: namespaces.map((labels) => outOfScope(scope, labels)) };
  });
}
