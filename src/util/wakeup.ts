/**
 * What a follower of a growing log waits on: `next()` settles the next time `signal()` is
 * called (one promise, however many wait), and holds no timer or listener.
 */
export class Wakeup {
  #wake: (() => void) | undefined;
  #changed: Promise<void> | undefined;

  /** Wakes whoever waits on `next()`. */
  signal(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    this.#changed = undefined;
    wake?.();
  }

  /** Settles at the next `signal()`. */
  next(): Promise<void> {
    this.#changed ??= new Promise((resolve) => {
      this.#wake = resolve;
    });
    return this.#changed;
  }
}
