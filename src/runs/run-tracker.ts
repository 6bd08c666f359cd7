/** The abort controllers of the runs in flight, so shutdown can wait for them or stop them. */
export class RunTracker {
  readonly #active = new Set<AbortController>();
  #idleWaiters: (() => void)[] = [];

  start(): AbortController {
    const controller = new AbortController();
    this.#active.add(controller);
    return controller;
  }

  finish(controller: AbortController): void {
    this.#active.delete(controller);
    if (this.#active.size === 0) {
      const waiters = this.#idleWaiters;
      this.#idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  get size(): number {
    return this.#active.size;
  }

  /** Resolves once no run is in flight (at once when none is). */
  whenIdle(): Promise<void> {
    if (this.#active.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  abortAll(reason: Error): void {
    for (const controller of this.#active) controller.abort(reason);
  }
}
