/**
 * Values a handler uses to state intent: throw `PermanentError` to dead-letter at once, return
 * `snooze(ms)` to run again later without spending an attempt. Both carry a `Symbol.for` brand so
 * two copies of core agree.
 */

import { SoniqError } from "../common/errors.js";

const PERMANENT = Symbol.for("soniq.permanentError");
const SNOOZE = Symbol.for("soniq.snooze");

/** Throw from a handler to dead-letter the job now (reason `permanent_failure`), skipping retries. */
export class PermanentError extends Error {
  readonly [PERMANENT] = true;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "PermanentError";
  }
}

export function isPermanentError(err: unknown): err is PermanentError {
  return typeof err === "object" && err !== null && (err as Record<symbol, unknown>)[PERMANENT] === true;
}

export interface Snooze {
  readonly [SNOOZE]: true;
  readonly delayMs: number;
  readonly reason: string | null;
}

/**
 * Return from a handler to requeue the job after `delayMs` without spending an attempt.
 * The row's `last_error` becomes `"SNOOZE: <reason>"` (or `"SNOOZE"`). Delays are capped by the
 * instance's `maxSnoozeMs`.
 */
export function snooze(delayMs: number, reason?: string): Snooze {
  if (typeof delayMs !== "number" || !Number.isFinite(delayMs) || delayMs < 0) {
    throw new SoniqError(
      "SONIQ_INVALID_ARGUMENT",
      `snooze(delayMs) needs a finite number >= 0, got ${String(delayMs)}.`,
      { context: { delayMs: String(delayMs) } },
    );
  }
  return Object.freeze({ [SNOOZE]: true as const, delayMs, reason: reason ?? null });
}

export function isSnooze(value: unknown): value is Snooze {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[SNOOZE] === true;
}
