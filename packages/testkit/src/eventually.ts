/** Polling for tests: no fixed sleeps, a bound on the wait, and the last failure in the timeout error. */

export interface EventuallyOptions {
  /** Give up after this long. Default 5000. */
  timeoutMs?: number;
  /** Pause between attempts. Default 10. */
  intervalMs?: number;
}

/**
 * Call `fn` until it resolves without throwing, and return its value. An assertion inside `fn` is the
 * usual condition. After `timeoutMs` it throws an error whose `cause` (and message) carry `fn`'s last failure.
 */
export async function eventually<T>(fn: () => T | Promise<T>, options: EventuallyOptions = {}): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 5000;
  const intervalMs = options.intervalMs ?? 10;
  const deadline = Date.now() + timeoutMs;
  let attempts = 0;
  for (;;) {
    attempts++;
    try {
      return await fn();
    } catch (err) {
      if (Date.now() + intervalMs > deadline) {
        const last = err instanceof Error ? err.message : String(err);
        throw new Error(`eventually: still failing after ${timeoutMs} ms (${attempts} attempts): ${last}`, {
          cause: err,
        });
      }
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** A promise that resolves after `ms` (for spacing setup steps, never for waiting on a result). */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
