/**
 * The scheduler's clock: what time it is, and how to wait. Production uses `systemClock`; tests pass a
 * `manualClock()` and move time with `advance()`, so a test of "fires every hour for ten hours" runs in
 * milliseconds with no sleeping. Give the same clock to the memory backend (`memoryBackend({ now:
 * clock.now })`) so leases expire on the same time line.
 */

export interface ClockTimer {
  cancel(): void;
}

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /**
   * Run `callback` after `ms`. The timer never keeps the process alive. A callback may return a
   * promise: a manual clock's `advance()` waits for it.
   */
  setTimer(callback: () => unknown, ms: number): ClockTimer;
}

export function isClock(value: unknown): value is Clock {
  const v = value as Partial<Clock> | null;
  return (
    typeof v === "object" && v !== null && typeof v.now === "function" && typeof v.setTimer === "function"
  );
}

export const systemClock: Clock = Object.freeze({
  now: () => Date.now(),
  setTimer(callback: () => unknown, ms: number): ClockTimer {
    const handle = setTimeout(callback, ms);
    handle.unref();
    return { cancel: () => clearTimeout(handle) };
  },
});

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
