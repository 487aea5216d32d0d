import { describe, expect, it } from "vitest";
import type { Job } from "../src/common/types.js";
import {
  computeRetryDelay,
  DEFAULT_RETRY,
  type RetryContext,
  retryPolicyProblems,
} from "../src/jobs/retry-policy.js";

const ctx = (attempt: number): RetryContext => ({
  attempt,
  maxAttempts: 10,
  error: new Error("x"),
  job: {} as Job,
});

describe("retry/policies", () => {
  it("fixed: the same delay every time, no jitter unless asked", () => {
    const policy = { backoff: "fixed", delayMs: 250 } as const;
    expect([1, 2, 5].map((a) => computeRetryDelay(policy, ctx(a)))).toEqual([250, 250, 250]);
    expect(computeRetryDelay({ ...policy, jitter: true }, ctx(1), () => 0.5)).toBe(125);
  });

  it("exponential: doubles per attempt, capped, full jitter between 0 and the capped delay", () => {
    const policy = { backoff: "exponential", delayMs: 100, maxDelayMs: 1000, jitter: false } as const;
    expect([1, 2, 3, 4, 5, 60].map((a) => computeRetryDelay(policy, ctx(a)))).toEqual([
      100, 200, 400, 800, 1000, 1000,
    ]);
    const jittered = { ...policy, jitter: true };
    expect(computeRetryDelay(jittered, ctx(3), () => 0)).toBe(0);
    expect(computeRetryDelay(jittered, ctx(3), () => 1 - Number.EPSILON)).toBe(400);
    expect(computeRetryDelay(jittered, ctx(40), () => 0.5)).toBe(500);
  });

  it("default: exponential from 1 s with a one-hour cap and jitter", () => {
    expect(DEFAULT_RETRY).toEqual({
      backoff: "exponential",
      delayMs: 1000,
      maxDelayMs: 3_600_000,
      jitter: true,
    });
    expect(computeRetryDelay(DEFAULT_RETRY, ctx(30), () => 1 - Number.EPSILON)).toBe(3_600_000);
  });

  it("list: per-attempt delays, the last one repeats", () => {
    const policy = { delaysMs: [10, 20, 30] };
    expect([1, 2, 3, 4, 9].map((a) => computeRetryDelay(policy, ctx(a)))).toEqual([10, 20, 30, 30, 30]);
  });

  it("function: gets the context; null means dead-letter now; garbage is an error", () => {
    expect(computeRetryDelay((c) => c.attempt * 7, ctx(3))).toBe(21);
    expect(computeRetryDelay(() => null, ctx(1))).toBeNull();
    expect(() => computeRetryDelay(() => -1, ctx(1))).toThrow(/expected a number >= 0 or null/);
  });

  it("validation names every problem", () => {
    expect(retryPolicyProblems({ backoff: "linear", delayMs: -1, jitter: "yes" }, "retry")).toHaveLength(3);
    expect(retryPolicyProblems({ delaysMs: [] }, "retry")).toHaveLength(1);
    expect(retryPolicyProblems(42, "retry")).toHaveLength(1);
    expect(retryPolicyProblems(() => 1, "retry")).toEqual([]);
  });
});
