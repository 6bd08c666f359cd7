import { setImmediate as nextTurn } from "node:timers/promises";

/** How much synchronous work a loop may do before it lets other requests run. */
const DEFAULT_TURN_BUDGET_MS = 4;

/**
 * Which turn of the event loop this is, as far as the loops below need to know: the number
 * goes up once the loop has passed its check phase, which one shared immediate marks while
 * any loop is watching. A loop that sees a new number has been suspended (it waited on I/O, a
 * timer or its turn), so the event loop has served others since.
 */
let turn = 0;
let marking = false;

function markNextTurn(): void {
  if (marking) return;
  marking = true;
  setImmediate(() => {
    marking = false;
    turn += 1;
  });
}

/**
 * Shares the event loop: a long loop calls `take()` once per step, and once it has worked for
 * `budgetMs` without being suspended, it waits for the next turn of the event loop, so other
 * requests (a `/health` probe, another stream) are served in between. A loop whose steps
 * arrive over the network (a model's tokens) is suspended between them and never waits: a
 * token is written as soon as it arrives. Cheap: one clock read per step.
 */
export class EventLoopTurns {
  readonly #budgetMs: number;
  #since = performance.now();
  #turn: number;

  constructor(budgetMs = DEFAULT_TURN_BUDGET_MS) {
    this.#budgetMs = budgetMs;
    // The budget starts now: a loop made in the middle of a long stretch of work (a run's first
    // event after its first step) waits at its first step past the budget, not one step later.
    this.#turn = turn;
    markNextTurn();
  }

  /** A promise only when the loop must wait: a step within budget costs no promise job. */
  take(): Promise<void> | undefined {
    const now = performance.now();
    if (this.#turn !== turn) {
      // Suspended since the last step: the budget starts again here.
      this.#turn = turn;
      this.#since = now;
      markNextTurn();
      return undefined;
    }
    if (now - this.#since < this.#budgetMs) return undefined;
    return this.#nextTurn();
  }

  async #nextTurn(): Promise<void> {
    await nextTurn();
    markNextTurn();
    this.#turn = turn;
    this.#since = performance.now();
  }
}
