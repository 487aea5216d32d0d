/**
 * The scheduler's clock: what time it is, and how to wait. Production uses `systemClock`; tests pass the
 * testkit's `manualClock()` (`@soniq/testkit`) and move time with `advance()`, so a test of "fires every hour
 * for ten hours" runs in milliseconds with no sleeping.
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
