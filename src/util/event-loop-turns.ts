import { setImmediate as nextTurn } from "node:timers/promises";

/** How much synchronous work a loop may do before it lets other requests run. */
const DEFAULT_TURN_BUDGET_MS = 4;

/**
 * Shares the event loop: a long loop calls `take()` once per step, and once `budgetMs` of
 * work has passed since its last turn, it waits for the next turn of the event loop, so
 * other requests (a `/health` probe, another stream) are served in between. Cheap when the
 * budget has not run out: one clock read.
 */
export class EventLoopTurns {
  readonly #budgetMs: number;
  #since = performance.now();

  constructor(budgetMs = DEFAULT_TURN_BUDGET_MS) {
    this.#budgetMs = budgetMs;
  }

  async take(): Promise<void> {
    if (performance.now() - this.#since < this.#budgetMs) return;
    await nextTurn();
    this.#since = performance.now();
  }
}
