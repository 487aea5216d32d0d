/**
 * Retry policies: how long a failed job waits before its next attempt.
 * `maxAttempts` decides whether there is a next attempt; the policy only decides when (or, for a
 * function returning null, that there is none: the job dead-letters with `permanent_failure`).
 */
import type { Job } from "../common/types.js";

export interface BackoffRetry {
  backoff: "exponential" | "fixed";
  /** Base delay: the fixed delay, or the first exponential step. Default 1000. */
  delayMs?: number;
  /** Cap on any single delay. Default 3_600_000 (one hour). */
  maxDelayMs?: number;
  /** Full jitter (a uniform random delay in [0, delay]). Default true for exponential, false for fixed. */
  jitter?: boolean;
}

export interface ListRetry {
  /** Delay before attempt n+1 is `delaysMs[n-1]`; the last entry repeats. */
  delaysMs: readonly number[];
}

export interface RetryContext {
  /** The attempt that just failed (1 on the first run). */
  attempt: number;
  maxAttempts: number;
  error: unknown;
  job: Job;
}

/** Returns the delay before the next attempt, or null to dead-letter now (`permanent_failure`). */
export type RetryFunction = (ctx: RetryContext) => number | null;

export type RetryPolicy = BackoffRetry | ListRetry | RetryFunction;

export const DEFAULT_RETRY: Readonly<Required<BackoffRetry>> = Object.freeze({
  backoff: "exponential",
  delayMs: 1000,
  maxDelayMs: 3_600_000,
  jitter: true,
});

const isNonNegative = (n: unknown): n is number => typeof n === "number" && Number.isFinite(n) && n >= 0;

/** Problems with a policy, for options validation (empty when valid). */
export function retryPolicyProblems(policy: unknown, label: string): string[] {
  if (typeof policy === "function") return [];
  if (typeof policy !== "object" || policy === null) {
    return [`${label} must be { backoff, delayMs, maxDelayMs, jitter }, { delaysMs: [...] } or a function`];
  }
  const p = policy as Record<string, unknown>;
  if ("delaysMs" in p) {
    const list = p.delaysMs;
    if (!Array.isArray(list) || list.length === 0 || !list.every(isNonNegative)) {
      return [`${label}.delaysMs must be a non-empty array of numbers >= 0`];
    }
    return [];
  }
  const problems: string[] = [];
  if (p.backoff !== "exponential" && p.backoff !== "fixed") {
    problems.push(`${label}.backoff must be "exponential" or "fixed"`);
  }
  if (p.delayMs !== undefined && !isNonNegative(p.delayMs)) problems.push(`${label}.delayMs must be >= 0`);
  if (p.maxDelayMs !== undefined && !isNonNegative(p.maxDelayMs)) {
    problems.push(`${label}.maxDelayMs must be >= 0`);
  }
  if (p.jitter !== undefined && typeof p.jitter !== "boolean")
    problems.push(`${label}.jitter must be a boolean`);
  return problems;
}

/**
 * The delay before the next attempt, or null to dead-letter now. `random` is injectable for tests.
 * A function policy that throws or returns something other than a number >= 0 or null is a bug in the
 * policy: the caller logs it and falls back to the default policy (`fallback`).
 */
export function computeRetryDelay(
  policy: RetryPolicy,
  ctx: RetryContext,
  random: () => number = Math.random,
): number | null {
  if (typeof policy === "function") {
    const delay = policy(ctx);
    if (delay === null) return null;
    if (!isNonNegative(delay)) {
      throw new TypeError(`retry function returned ${String(delay)}; expected a number >= 0 or null`);
    }
    return delay;
  }
  const attempt = Math.max(1, ctx.attempt);
  if ("delaysMs" in policy) {
    const list = policy.delaysMs;
    return list[Math.min(attempt - 1, list.length - 1)] ?? 0;
  }
  const base = policy.delayMs ?? DEFAULT_RETRY.delayMs;
  const cap = policy.maxDelayMs ?? DEFAULT_RETRY.maxDelayMs;
  const exponential = policy.backoff === "exponential";
  const raw = exponential ? base * 2 ** Math.min(attempt - 1, 52) : base;
  const capped = Math.min(raw, cap);
  const jitter = policy.jitter ?? exponential;
  return jitter ? Math.floor(random() * (capped + 1)) : capped;
}
