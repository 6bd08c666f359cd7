import { BaseStore, type Item, type Operation, type OperationResults } from "@langchain/langgraph";

/**
 * Store items' time to live (langgraph.json's `store.ttl`): `defaultTtl` minutes for an item
 * put without its own, and whether reading an item (a get, or a search that returns it) starts
 * its time again (`refreshOnRead`, default true, as LangGraph's).
 */
export interface StoreTtl {
  defaultTtl?: number;
  refreshOnRead?: boolean;
}

/** An item's own time to live, when it has one, and when it ends. */
interface Expiry {
  namespace: string[];
  key: string;
  ttlMs: number;
  at: number;
}

/** What a put says of its item's time to live: the Agent Protocol's `ttl` (minutes), carried on the operation. */
type TimedOperation = Operation & { options?: { ttl?: number | null }; refreshTtl?: boolean };

const idOf = (namespace: readonly string[], key: string) => JSON.stringify([namespace, key]);

/**
 * LangGraph's in-memory store with a time to live per item: a put with `ttl` (or the default)
 * gives its item one, a read may start it again, and the items past theirs are deleted at the
 * store's next call, before it answers: no timer, and nothing expired is ever returned.
 * (`PostgresStore` keeps times to live itself.)
 */
export class ExpiringStore extends BaseStore {
  readonly #inner: BaseStore;
  readonly #ttl: StoreTtl;
  readonly #expiries = new Map<string, Expiry>();
  /** No item ends before this (an item read since may end later). */
  #next = Number.POSITIVE_INFINITY;

  readonly #now: () => number;

  constructor(inner: BaseStore, ttl: StoreTtl = {}, clock: { now: () => number } = Date) {
    super();
    this.#inner = inner;
    this.#ttl = ttl;
    this.#now = () => clock.now();
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    await this.#deleteExpired();
    const results = await this.#inner.batch(operations);
    const now = this.#now();
    operations.forEach((operation: TimedOperation, index) => {
      if ("value" in operation) {
        this.#timePut(operation, now);
        return;
      }
      const refresh = operation.refreshTtl ?? this.#ttl.refreshOnRead ?? true;
      if (!refresh || this.#expiries.size === 0) return;
      const result = results[index] as Item | Item[] | null | undefined;
      if ("key" in operation && !Array.isArray(result) && result != null) this.#refresh(result, now);
      if ("namespacePrefix" in operation && Array.isArray(result)) for (const item of result) this.#refresh(item, now);
    });
    return results;
  }

  #timePut(operation: TimedOperation & { namespace: string[]; key: string; value: unknown }, now: number): void {
    const id = idOf(operation.namespace, operation.key);
    // An own `ttl` of null: none at all; none given: the default.
    const own = operation.options?.ttl;
    const minutes = operation.value === null || own === null ? undefined : (own ?? this.#ttl.defaultTtl);
    if (minutes === undefined || minutes === null) {
      this.#expiries.delete(id);
      return;
    }
    const expiry = { namespace: operation.namespace, key: operation.key, ttlMs: minutes * 60_000, at: now + minutes * 60_000 };
    this.#expiries.set(id, expiry);
    this.#next = Math.min(this.#next, expiry.at);
  }

  #refresh(item: Item, now: number): void {
    const expiry = this.#expiries.get(idOf(item.namespace, item.key));
    if (expiry !== undefined) expiry.at = now + expiry.ttlMs;
  }

  /** Deletes the items past their time, when one may be. */
  async #deleteExpired(): Promise<void> {
    const now = this.#now();
    if (now < this.#next) return;
    const expired: Expiry[] = [];
    let next = Number.POSITIVE_INFINITY;
    for (const [id, expiry] of this.#expiries) {
      if (expiry.at <= now) {
        expired.push(expiry);
        this.#expiries.delete(id);
      } else next = Math.min(next, expiry.at);
    }
    this.#next = next;
    if (expired.length > 0) await this.#inner.batch(expired.map(({ namespace, key }) => ({ namespace, key, value: null })));
  }

  /** How many items have a time to live now (for the tests). */
  get timed(): number {
    return this.#expiries.size;
  }
}
