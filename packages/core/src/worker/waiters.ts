/** Promises that resolve once a condition on the worker holds (re-checked after each state change). */
export class Waiters {
  #waiters: { ready: () => boolean; resolve: () => void }[] = [];

  wait(ready: () => boolean): Promise<void> {
    if (ready()) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ ready, resolve }));
  }

  /** Resolves the waiters whose condition now holds; a no-op without waiters (called once per job). */
  check(): void {
    if (this.#waiters.length === 0) return;
    this.#waiters = this.#waiters.filter((w) => {
      if (!w.ready()) return true;
      w.resolve();
      return false;
    });
  }
}
