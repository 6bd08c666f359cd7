import {
  BaseStore,
  type Item,
  type ListNamespacesOperation,
  type MatchCondition,
  type Operation,
  type OperationResults,
  type SearchOperation,
} from "@langchain/langgraph";
import { keptPage } from "../util/kept-page.js";

// LangGraph's `PostgresStore` matches a namespace prefix as text, `namespace_path LIKE
// 'a:b%'`: no separator after the last label, so `["acme"]` also finds `["acme-eu", …]` and
// `["notes"]` finds `["notes2"]`. The in-memory store compares whole labels. This wrapper gives
// every store the in-memory store's meaning: a search or a namespace listing returns only what
// lies under the prefix label by label, paging past the rows the text match let in. For a
// store that matches with LIKE, labels holding LIKE's wildcards are refused up front (named as
// LangGraph names its own namespace errors), before they can widen a match.

const LIKE_SPECIAL = /[%_\\]/u;

/** A namespace label the store cannot match exactly; the client's to fix. */
class UnmatchableLabelError extends Error {
  override name = "InvalidNamespaceError";
}

/** True when `namespace` starts with `prefix`, label by label (`*` in `prefix` matches any label). */
function startsWithLabels(namespace: readonly string[], prefix: readonly string[]): boolean {
  if (prefix.length > namespace.length) return false;
  return prefix.every((label, index) => label === "*" || label === namespace[index]);
}

function endsWithLabels(namespace: readonly string[], suffix: readonly string[]): boolean {
  if (suffix.length > namespace.length) return false;
  const start = namespace.length - suffix.length;
  return suffix.every((label, index) => label === "*" || label === namespace[start + index]);
}

function matchesAll(namespace: readonly string[], conditions: readonly MatchCondition[] | undefined): boolean {
  return (conditions ?? []).every((condition) =>
    condition.matchType === "prefix" ? startsWithLabels(namespace, condition.path) : endsWithLabels(namespace, condition.path),
  );
}

export interface WholeLabelStoreOptions {
  /** The store matches prefixes with SQL `LIKE`: refuse labels with `%`, `_` or `\`. */
  likeMatching?: boolean;
}

/** A LangGraph store whose searches and namespace listings match whole labels. */
export class WholeLabelStore extends BaseStore {
  readonly #inner: BaseStore;
  readonly #likeMatching: boolean;

  constructor(inner: BaseStore, options: WholeLabelStoreOptions = {}) {
    super();
    this.#inner = inner;
    this.#likeMatching = options.likeMatching ?? false;
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const results: unknown[] = [];
    for (const operation of operations) {
      if ("namespacePrefix" in operation) results.push(await this.#search(operation));
      else if ("matchConditions" in operation) results.push(await this.#listNamespaces(operation));
      else {
        this.#checkLabels("namespace" in operation ? operation.namespace : []);
        const [result] = await this.#inner.batch([operation]);
        results.push(result);
      }
    }
    return results as OperationResults<Op>;
  }

  #checkLabels(labels: readonly string[]): void {
    if (!this.#likeMatching) return;
    const bad = labels.find((label) => LIKE_SPECIAL.test(label));
    if (bad !== undefined) {
      throw new UnmatchableLabelError(`The namespace label '${bad}' holds '%', '_' or '\\', which this store cannot match exactly.`);
    }
  }

  async #search(operation: SearchOperation): Promise<Item[]> {
    this.#checkLabels(operation.namespacePrefix);
    const prefix = operation.namespacePrefix;
    return keptPage(
      async (offset, limit) => {
        const [items] = await this.#inner.batch([{ ...operation, offset, limit }]);
        return items as Item[];
      },
      (item: Item) => startsWithLabels(item.namespace, prefix),
      operation.offset ?? 0,
      operation.limit ?? 10,
    );
  }

  async #listNamespaces(operation: ListNamespacesOperation): Promise<string[][]> {
    for (const condition of operation.matchConditions ?? []) this.#checkLabels(condition.path.filter((label) => label !== "*"));
    return keptPage(
      async (offset, limit) => {
        const [namespaces] = await this.#inner.batch([{ ...operation, offset, limit }]);
        return namespaces as string[][];
      },
      (namespace) => matchesAll(namespace, operation.matchConditions),
      operation.offset,
      operation.limit,
    );
  }

  override start(): void | Promise<void> {
    return this.#inner.start();
  }

  override stop(): void | Promise<void> {
    return this.#inner.stop();
  }
}
