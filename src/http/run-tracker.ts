/** The abort controllers of the runs in flight, so shutdown can stop them when time is up. */
export class RunTracker {
  readonly #active = new Set<AbortController>();

  start(): AbortController {
    const controller = new AbortController();
    this.#active.add(controller);
    return controller;
  }

  finish(controller: AbortController): void {
    this.#active.delete(controller);
  }

  get size(): number {
    return this.#active.size;
  }

  abortAll(reason: string): void {
    for (const controller of this.#active) controller.abort(new Error(reason));
  }
}
