// The in-memory caps (threads, protocol v2 thread logs, stored responses, conversations, chat
// sessions, A2A tasks) are shared by every tenant of a process. Evicting the least recently
// used entry overall let one tenant push out another's: 10,050 empty threads made in six
// seconds took a second tenant's threads and checkpoints with them. So an eviction takes from
// the tenant holding the most entries, its own least recently used first: a tenant within its
// fair share of a cap loses nothing to another, and one that fills the cap alone may use all of
// it until someone else needs room.

/** Which scope (tenant) holds which keys of a bounded map, each scope's oldest first. */
class FairShare {
  readonly #keys = new Map<string, Set<string>>();

  /** Records `key` as the newest of `scope` (a new entry, or one just used). */
  add(scope: string, key: string): void {
    let keys = this.#keys.get(scope);
    if (keys === undefined) {
      keys = new Set();
      this.#keys.set(scope, keys);
    }
    keys.delete(key);
    keys.add(key);
  }

  remove(scope: string, key: string): void {
    const keys = this.#keys.get(scope);
    if (keys === undefined) return;
    keys.delete(key);
    if (keys.size === 0) this.#keys.delete(scope);
  }

  /**
   * The keys to evict to free `excess` places: each the oldest key of the scope holding the
   * most, skipping what `spare` says must stay (a busy thread). Taken off the index as they
   * are chosen; fewer than `excess` when everything left is spared.
   */
  victims(excess: number, spare: (key: string) => boolean = () => false): string[] {
    const chosen: string[] = [];
    while (chosen.length < excess) {
      const scopes = [...this.#keys].sort(([, first], [, second]) => second.size - first.size);
      let found: { scope: string; key: string } | undefined;
      for (const [scope, keys] of scopes) {
        for (const key of keys) {
          if (spare(key)) continue;
          found = { scope, key };
          break;
        }
        if (found !== undefined) break;
      }
      if (found === undefined) break;
      this.remove(found.scope, found.key);
      chosen.push(found.key);
    }
    return chosen;
  }
}

/** A map bounded by tenant-fair eviction: each value's scope is read from it (`scopeOf`). */
export class FairMap<V> {
  readonly #values = new Map<string, V>();
  readonly #shares = new FairShare();
  readonly #scopeOf: (value: V) => string;

  constructor(scopeOf: (value: V) => string) {
    this.#scopeOf = scopeOf;
  }

  get size(): number {
    return this.#values.size;
  }

  get(key: string): V | undefined {
    return this.#values.get(key);
  }

  has(key: string): boolean {
    return this.#values.has(key);
  }

  /** Sets the value, making it its scope's most recently used. */
  set(key: string, value: V): this {
    const previous = this.#values.get(key);
    if (previous !== undefined && this.#scopeOf(previous) !== this.#scopeOf(value)) this.#shares.remove(this.#scopeOf(previous), key);
    this.#values.set(key, value);
    this.#shares.add(this.#scopeOf(value), key);
    return this;
  }

  delete(key: string): boolean {
    const value = this.#values.get(key);
    if (value === undefined) return false;
    this.#shares.remove(this.#scopeOf(value), key);
    return this.#values.delete(key);
  }

  values(): IterableIterator<V> {
    return this.#values.values();
  }

  [Symbol.iterator](): IterableIterator<[string, V]> {
    return this.#values.entries();
  }

  /** Evicts down to `max` entries (see `FairShare.victims`); the entries it took. */
  evictOver(max: number, spare: (value: V) => boolean = () => false): [string, V][] {
    const excess = this.#values.size - max;
    if (excess <= 0) return [];
    const evicted: [string, V][] = [];
    for (const key of this.#shares.victims(excess, (candidate) => spare(this.#values.get(candidate) as V))) {
      const value = this.#values.get(key) as V;
      this.#values.delete(key);
      evicted.push([key, value]);
    }
    return evicted;
  }
}
