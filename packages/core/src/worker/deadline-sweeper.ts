/**
 * Job timeouts with one timer per worker instead of one per job: the timer is armed for the earliest
 * deadline; when it fires it times out every expired run and re-arms for the next. Finished runs need no
 * clean-up (a later sweep simply skips them), which keeps the hot path free of timer calls.
 */
import type { Running } from "./runner.js";

export class DeadlineSweeper {
  #timer: NodeJS.Timeout | undefined;
  #at = Number.POSITIVE_INFINITY;

  constructor(
    private readonly runs: () => Iterable<Running>,
    private readonly expire: (run: Running) => void,
    /** False while someone awaits the runs (`runOnce`): then the timer keeps the process alive. */
    private readonly unref: () => boolean,
  ) {}

  /** Call when a run with a deadline starts. */
  track(run: Running): void {
    if (run.deadline > 0 && run.deadline < this.#at) this.#arm(run.deadline);
  }

  clear(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#at = Number.POSITIVE_INFINITY;
  }

  #arm(at: number): void {
    clearTimeout(this.#timer);
    this.#at = at;
    this.#timer = setTimeout(() => this.#sweep(), Math.max(0, at - Date.now()));
    if (this.unref()) this.#timer.unref();
  }

  #sweep(): void {
    this.#timer = undefined;
    this.#at = Number.POSITIVE_INFINITY;
    const now = Date.now();
    let next = Number.POSITIVE_INFINITY;
    for (const run of this.runs()) {
      if (run.deadline === 0 || run.settled) continue;
      if (run.deadline <= now) this.expire(run);
      else if (run.deadline < next) next = run.deadline;
    }
    if (next < Number.POSITIVE_INFINITY) this.#arm(next);
  }
}
