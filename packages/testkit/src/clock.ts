/**
 * A clock for tests: time only moves when the test says so. Pass it as `new Soniq({ clock })` and give the
 * same clock to the memory backend (`memoryBackend({ now: clock.now })`) so leases expire on the same time
 * line; then `await clock.advance(ms)` runs every timer that falls due, in order, with no sleeping.
 */

import type { Clock } from "@soniq/core";

export interface ManualClock extends Clock {
  /**
   * Move time forward by `ms`, running every timer that falls due on the way in time order (each at its
   * own instant), and waiting for what each one returns. Timers set by those callbacks run too when
   * they fall inside the step.
   */
  advance(ms: number): Promise<void>;
  /** Move time forward to `at` (see `advance`). */
  advanceTo(at: Date | number): Promise<void>;
  /** Timers not yet run. */
  pending(): number;
}

interface ManualTimer {
  at: number;
  seq: number;
  callback: () => unknown;
}

/** A clock that only moves when told. `start` defaults to 2026-01-01T00:00:00Z. */
export function manualClock(start: Date | number = Date.UTC(2026, 0, 1)): ManualClock {
  let now = typeof start === "number" ? start : start.getTime();
  let seq = 0;
  const timers = new Set<ManualTimer>();
  const nextDue = (until: number): ManualTimer | undefined => {
    let best: ManualTimer | undefined;
    for (const t of timers) {
      if (t.at <= until && (best === undefined || t.at < best.at || (t.at === best.at && t.seq < best.seq)))
        best = t;
    }
    return best;
  };
  const clock: ManualClock = {
    now: () => now,
    setTimer(callback, ms) {
      const timer: ManualTimer = { at: now + Math.max(0, ms), seq: ++seq, callback };
      timers.add(timer);
      return { cancel: () => timers.delete(timer) };
    },
    async advance(ms) {
      await clock.advanceTo(now + ms);
    },
    async advanceTo(at) {
      const until = typeof at === "number" ? at : at.getTime();
      for (let t = nextDue(until); t !== undefined; t = nextDue(until)) {
        timers.delete(t);
        now = Math.max(now, t.at);
        await t.callback();
      }
      now = Math.max(now, until);
    },
    pending: () => timers.size,
  };
  return clock;
}
