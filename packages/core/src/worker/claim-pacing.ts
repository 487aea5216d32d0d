/**
 * How much and how often a worker claims.
 *
 * Window: a claim asks for free slots + window - buffered jobs. When a claim comes back full while slots
 * sat idle waiting for it and jobs finished meanwhile (they finish faster than a round trip refills them),
 * the window grows 4x up to `maxBatchSize`; when the queue runs dry (or a claim fails) it returns to
 * `batchSize`. Slow jobs never starve the slots, so they keep the small window and jobs stay spread
 * across workers.
 *
 * Poll timer: after a claim that drained the queue or failed, the next claim waits for a wake-up or this
 * timer. The interval is jittered (±20 %) so workers do not claim in step, and backs off exponentially
 * (up to 30x) while claims keep failing.
 */
import type { ResolvedWorkerOptions } from "../options.js";

export function nextClaimWindow(
  window: number,
  options: ResolvedWorkerOptions,
  drained: boolean,
  starved: boolean,
): number {
  if (drained) return options.batchSize;
  // x4, not x2: a drain reaches the full window in three claims instead of six (W1 and W4 in bench/).
  return starved ? Math.min(window * 4, options.maxBatchSize) : window;
}

export class PollTimer {
  #timer: NodeJS.Timeout | undefined;
  readonly #fire: () => void;

  constructor(fire: () => void) {
    this.#fire = fire;
  }

  /** Arms the timer unless it is armed already. */
  schedule(intervalMs: number, claimErrors: number): void {
    if (this.#timer) return;
    const backoff = claimErrors > 0 ? Math.min(2 ** (claimErrors - 1), 30) : 1;
    const delay = intervalMs * backoff * (0.8 + Math.random() * 0.4);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#fire();
    }, delay);
    this.#timer.unref();
  }

  cancel(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
