/**
 * How much and how often a worker claims.
 *
 * Window: a claim asks for free slots + window - buffered jobs. When a claim comes back full while slots
 * sat idle waiting for it and jobs finished meanwhile (they finish faster than a round trip refills them),
 * the window grows 4x up to `maxBatchSize`; when the queue runs dry (or a claim fails) it returns to
 * `batchSize`. A claim a queue limit cut short (`capped`) did not run dry: the window stays. Slow jobs
 * never starve the slots, so they keep the small window and jobs stay spread across workers.
 *
 * Poll timer: after a claim that drained the queue or failed, the next claim waits for a wake-up or this
 * timer. The interval is jittered (±20 %) so workers do not claim in step, and backs off exponentially
 * (up to 30x) while claims keep failing.
 *
 * Gate (when the worker may claim): after a short claim that was not capped (drained) or a failed one, the
 * worker is idle until a wake-up or the poll timer. After a capped one (a queue limit held due jobs back)
 * it is held until it frees capacity itself (a job of its own finishes or an outcome is written), a
 * wake-up, or the timer, armed for the sooner of the rate window's opening and the poll interval (the
 * fallback when other workers hold the capacity); and while its last claim was capped, only limited queues
 * may have more, so a claim needs a slot to fill from them (the worker then claims at the end of the
 * event-loop turn, so the slots its jobs free in one turn share one claim). A wake-up or freed capacity
 * during the claim skips the wait. So every claim follows an event: a full queue never makes the worker spin.
 */
import type { ClaimCap } from "../contract/index.js";
import type { ResolvedWorkerOptions } from "./options.js";

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

/** The claim gate (see the file comment). */
export class ClaimGate {
  #idle = false;
  #held = false;
  #capped = false;
  #wakePending = false;
  /** Counts what frees capacity, to see it happen while a claim is out. */
  #freed = 0;
  #freedAtClaim = 0;
  readonly #poll: PollTimer;

  constructor(
    private readonly pollIntervalMs: number,
    /** The timer fired: the worker may claim again. */
    resume: () => void,
  ) {
    this.#poll = new PollTimer(() => {
      this.#idle = false;
      this.#held = false;
      resume();
    });
  }

  /** The last claim was capped (and no wake-up came since). */
  get capped(): boolean {
    return this.#capped;
  }

  /** Whether to claim now, with `limitedMax` free slots to fill from limited queues. */
  allows(limitedMax: number): boolean {
    return !this.#idle && !this.#held && !(this.#capped && limitedMax === 0);
  }

  /** A claim goes out. */
  claiming(): void {
    this.#wakePending = false;
    this.#freedAtClaim = this.#freed;
  }

  /** A wake-up: new jobs may be due in any queue (`claiming`: one claim is out; it hears of it on return). */
  wake(claiming: boolean): void {
    if (claiming) {
      this.#wakePending = true;
      return;
    }
    this.#capped = false;
    this.#open();
  }

  /** One of the worker's jobs finished or an outcome was written. */
  freed(): void {
    this.#freed++;
    if (this.#held) this.#open();
  }

  /** The claim came back: `short` when it failed or took fewer than asked, `capped` as the backend said. */
  claimed(failed: boolean, short: boolean, capped: ClaimCap | null, claimErrors: number): void {
    const woken = this.#wakePending && !failed;
    this.#wakePending = false;
    this.#capped = short && capped !== null && !woken;
    if (short && capped === null && !woken) {
      this.#idle = true;
      this.#poll.schedule(this.pollIntervalMs, claimErrors);
    } else if (this.#capped && this.#freed === this.#freedAtClaim) {
      this.#held = true;
      const retryInMs = capped?.retryInMs ?? this.pollIntervalMs;
      this.#poll.schedule(Math.min(retryInMs, this.pollIntervalMs), 0);
    }
  }

  cancel(): void {
    this.#poll.cancel();
  }

  #open(): void {
    this.#idle = false;
    this.#held = false;
    this.#poll.cancel();
  }
}
