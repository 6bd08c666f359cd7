import { BaseStore, type Item, type Operation, type OperationResults } from "@langchain/langgraph";

// A tenant's part of LangGraph's store. On a server whose keys name tenants, every namespace a
// tenant reads or writes lies under `["chat-serve-tenant", <its label>, …]`, through the
// Agent Protocol's `/store` routes and through the store a graph reads (`config.store`) alike,
// so one tenant's graph never reads another's memories. The scope `default` (no tenants, or a
// project's `Auth`, whose handlers tell users apart) uses the namespaces as they are.

/** The first label of a tenant's namespaces, which no client and no graph may use itself. */
export const TENANT_LABEL = "chat-serve-tenant";

/**
 * A tenant's label in the store: its name, with the characters a store may not hold or match
 * exactly (`.` and `:` LangGraph's separators, `%`, `_` and `\` SQL's wildcards) and the escape
 * `~` itself written `~XX` (their UTF-8 bytes in hex). One name, one label; no two names meet.
 */
function tenantLabel(scope: string): string {
  return scope.replace(/[.:%_\\~]/gu, (character) =>
    [...Buffer.from(character, "utf8")].map((byte) => `~${byte.toString(16).padStart(2, "0")}`).join(""),
  );
}

/** The labels a scope's namespaces start with in the store (none for `default`). */
export function tenantPrefix(scope: string): string[] {
  return scope === "default" ? [] : [TENANT_LABEL, tenantLabel(scope)];
}

/** A namespace label the server keeps for itself, used by a graph: refused, as LangGraph names its own namespace errors. */
class ReservedLabelError extends Error {
  override name = "InvalidNamespaceError";
}

/**
 * The store as one scope sees it: namespaces written and read under the scope's prefix, and
 * given back without it. A listing of namespaces sees the scope's alone.
 */
export class TenantStore extends BaseStore {
  readonly #inner: BaseStore;
  readonly #prefix: string[];

  constructor(inner: BaseStore, scope: string) {
    super();
    this.#inner = inner;
    this.#prefix = tenantPrefix(scope);
  }

  /** The store a scope's graphs read: the store itself for `default`. */
  static of(inner: BaseStore, scope: string): BaseStore {
    return scope === "default" ? inner : new TenantStore(inner, scope);
  }

  #in(namespace: readonly string[]): string[] {
    if (namespace[0] === TENANT_LABEL) throw new ReservedLabelError(`The namespace label '${TENANT_LABEL}' is reserved by the server.`);
    return [...this.#prefix, ...namespace];
  }

  #out<T extends Item | null>(item: T): T {
    return item === null ? item : ({ ...item, namespace: item.namespace.slice(this.#prefix.length) } as T);
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const inner = operations.map((operation): Operation => {
      if ("namespace" in operation) return { ...operation, namespace: this.#in(operation.namespace) };
      if ("namespacePrefix" in operation) return { ...operation, namespacePrefix: this.#in(operation.namespacePrefix) };
      // A listing of namespaces: the scope's alone, its depth counted below the scope's labels.
      const conditions = (operation.matchConditions ?? []).map((condition) =>
        condition.matchType === "prefix" ? { ...condition, path: this.#in(condition.path) } : condition,
      );
      return {
        ...operation,
        matchConditions: [{ matchType: "prefix", path: this.#prefix }, ...conditions],
        ...(operation.maxDepth === undefined ? {} : { maxDepth: operation.maxDepth + this.#prefix.length }),
      };
    });
    const results = await this.#inner.batch(inner);
    return results.map((result, index) => {
      const operation = operations[index]!;
      if ("namespacePrefix" in operation) return (result as Item[]).map((item) => this.#out(item));
      if (!("namespace" in operation)) return (result as string[][]).map((namespace) => namespace.slice(this.#prefix.length));
      if (!("value" in operation)) return this.#out(result as Item | null);
      return result;
    }) as OperationResults<Op>;
  }

  override start(): void {}

  override stop(): void {}
}
