/**
 * The default jitter of exponential backoff, tested as users get it: no `jitter` given (neither in a policy
 * nor by leaving `retry` out), so a policy that dropped the default would be caught. Math.random is pinned
 * so full jitter is visible: at 0 a jittered delay is 0, an unjittered one the full step.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Job } from "../src/common/types.js";
import { computeRetryDelay, type RetryContext } from "../src/jobs/retry-policy.js";
import { memoryApps } from "./memory.js";

const app = memoryApps();
const ctx = (attempt: number): RetryContext => ({
  attempt,
  maxAttempts: 10,
  error: new Error("x"),
  job: {} as Job,
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe("retry/default-jitter", () => {
  it("retry/exponential-jitters-unless-told-not-to: an exponential policy without `jitter` is jittered; a fixed one is not", () => {
    const exponential = { backoff: "exponential", delayMs: 100 } as const;
    expect(computeRetryDelay(exponential, ctx(3), () => 0.5)).toBe(200);
    expect(computeRetryDelay(exponential, ctx(3), () => 0)).toBe(0);
    expect(computeRetryDelay({ backoff: "fixed", delayMs: 100 }, ctx(3), () => 0)).toBe(100);
  });

  it("retry/default-policy-jitters: a job with no retry option retries after a jittered delay (0 at random() = 0)", async () => {
    vi.spyOn(Math, "random").mockReturnValue(0);
    const soniq = app();
    let runs = 0;
    soniq.job("retry.default", async () => {
      runs++;
      if (runs === 1) throw new Error("first run fails");
      return "second run";
    });
    const { id } = await soniq.jobs.enqueue("retry.default", {});
    // Unjittered, the retry would wait the first full step (1 s) and this runOnce would stop after one run.
    expect(await soniq.worker().runOnce()).toBe(2);
    expect(await soniq.jobs.get(id)).toMatchObject({ status: "done", result: "second run", attempts: 2 });
  });
});
