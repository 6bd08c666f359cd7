/**
 * Runs a sweep on a timer, one at a time: a sweep still running when the next is due is left
 * to finish. The timer does not keep the process alive; `stop()` clears it and waits for the
 * sweep in progress.
 */
export class SweepTimer {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<unknown> | undefined;

  constructor(
    private readonly everyMs: number,
    private readonly sweep: () => Promise<unknown>,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => {
      if (this.#running !== undefined) return;
      this.#running = this.sweep()
        .catch(this.onError)
        .finally(() => {
          this.#running = undefined;
        });
    }, this.everyMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }
}
