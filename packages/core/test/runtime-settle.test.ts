/** Runtime scenarios on the memory backend: timeouts, and how each run's outcome is settled (once, in batches). */

import { describe, expect, it } from "vitest";
import { JobAbortedError } from "../src/index.js";
import { memoryApps, memoryBackend, overriding } from "./memory.js";

const app = memoryApps();

describe("runtime/timeouts", () => {
  it("runtime/timeout-aborts-signal: the signal aborts and the attempt fails with 'timed out'", async () => {
    const soniq = app();
    let reason: unknown;
    const slow = soniq.job(
      "slow.job",
      (_args, ctx) =>
        new Promise((resolve) => {
          ctx.signal.addEventListener("abort", () => {
            reason = ctx.signal.reason;
            resolve("late");
          });
        }),
      { timeoutMs: 50, maxAttempts: 1 },
    );
    const { id } = await slow.enqueue({});
    await soniq.worker().runOnce();
    expect(reason).toBeInstanceOf(JobAbortedError);
    expect((reason as JobAbortedError).why).toBe("timeout");
    const dead = await soniq.deadLetters.get(id);
    expect(dead?.deadLetterReason).toBe("max_retries_exceeded");
    expect(dead?.lastError).toContain("timed out after 50 ms");
  });

  it("runtime/timeout-instance-default: defaultTimeoutMs applies to jobs without their own, and retries", async () => {
    const soniq = app({ defaultTimeoutMs: 40 });
    let runs = 0;
    const hang = soniq.job(
      "hangs.forever",
      () => {
        runs++;
        return new Promise(() => {});
      },
      { maxAttempts: 2, retry: { delaysMs: [0] } },
    );
    const { id } = await hang.enqueue({});
    await soniq.worker().runOnce();
    expect(runs).toBe(2);
    expect((await soniq.deadLetters.get(id))?.lastError).toContain("timed out");
  });
});

describe("runtime/settle-once", () => {
  it("runtime/one-outcome-per-run: a timeout during a slow afterJob hook does not record a second outcome", async () => {
    const ends: string[] = [];
    const soniq = app({ metrics: { recordJobStart() {}, recordJobEnd: (e) => void ends.push(e.status) } });
    soniq.use({ afterJob: () => new Promise((resolve) => setTimeout(resolve, 120)) });
    const job = soniq.job("settle.once", async () => "finished in time", { timeoutMs: 30, maxAttempts: 3 });
    const { id } = await job.enqueue({});
    expect(await soniq.worker().runOnce()).toBe(1);
    expect(ends).toEqual(["done"]);
    expect(await soniq.jobs.get(id)).toMatchObject({
      status: "done",
      attempts: 1,
      result: "finished in time",
    });
  });
});

describe("runtime/settle", () => {
  it("runtime/outcomes-batched: done and dead-letter outcomes share settle calls, and each is reported", async () => {
    const backend = memoryBackend();
    const batches: string[][] = [];
    const counting = overriding(backend, "runs", {
      settle: (items, workerId) => {
        batches.push(items.map((i) => i.kind));
        return backend.runs.settle(items, workerId);
      },
    });
    const soniq = app({}, counting);
    const job = soniq.job(
      "batch.mixed",
      async (args: { i: number }) => {
        if (args.i % 2 === 1) throw new Error("odd");
        return args.i;
      },
      { maxAttempts: 1 },
    );
    await soniq.jobs.enqueueMany(Array.from({ length: 40 }, (_, i) => ({ job, args: { i } })));
    const worker = soniq.worker({ concurrency: 20 });
    const reported: string[] = [];
    worker.on("job:done", () => void reported.push("done"));
    worker.on("job:dead_letter", ({ reason }) => void reported.push(reason));
    expect(await worker.runOnce()).toBe(40);
    expect(await soniq.jobs.stats()).toMatchObject({ done: 20, dead_letter: 20 });
    expect(reported.filter((r) => r === "done")).toHaveLength(20);
    expect(reported.filter((r) => r === "max_retries_exceeded")).toHaveLength(20);
    expect(batches.flat()).toHaveLength(40);
    expect(batches.length).toBeLessThan(40);
    expect(batches.some((kinds) => new Set(kinds).size > 1)).toBe(true);
  });

  it("runtime/storable-errors: an error text with NUL or a lone surrogate is written with U+FFFD, its batch intact", async () => {
    const soniq = app();
    const odd = soniq.job(
      "odd.error",
      async () => {
        throw new Error("bad\u0000byte \ud800half");
      },
      { maxAttempts: 1 },
    );
    const fine = soniq.job("fine.job", async () => "ok");
    const [bad, good] = await soniq.jobs.enqueueMany([
      { job: odd, args: {} },
      { job: fine, args: {} },
    ]);
    expect(await soniq.worker({ concurrency: 2 }).runOnce()).toBe(2);
    const dead = await soniq.deadLetters.get(bad?.id as string);
    expect(dead?.lastError).toContain("Error: bad\ufffdbyte \ufffdhalf");
    expect((await soniq.jobs.get(good?.id as string))?.result ?? null).toBe("ok");
  });

  it("runtime/claimed-past-attempts: a job claimed past maxAttempts is dead-lettered unrun, and the claim still counts it", async () => {
    const backend = memoryBackend();
    const ends: string[] = [];
    const soniq = app(
      { metrics: { recordJobStart() {}, recordJobEnd: (e) => void ends.push(e.status) } },
      backend,
    );
    let ran = 0;
    const job = soniq.job("crashy.job", async () => ++ran, { maxAttempts: 1 });
    const crashed = await soniq.jobs.enqueueMany(
      [1, 2].map((i) => ({ job, args: { i }, options: { priority: 1 } })),
    );
    // Two runs whose worker died before settling (its row is gone): recovery requeues them with attempt 1 spent.
    expect(
      (await backend.runs.claim({ queues: null, limit: 2, workerId: "0e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b" }))
        .jobs,
    ).toHaveLength(2);
    expect((await backend.workers.recoverStale(60_000)).requeuedJobIds.sort()).toEqual(
      crashed.map((r) => r.id).sort(),
    );
    const healthy = await job.enqueue({ i: 3 });
    const worker = soniq.worker({ concurrency: 2 });
    const dead: string[] = [];
    worker.on("job:dead_letter", ({ job, reason, error }) => void dead.push(`${job.id}:${reason}:${error}`));
    // The first claim (2 rows, both past their attempts) is full, so runOnce claims again and runs the third.
    expect(await worker.runOnce()).toBe(1);
    expect(ran).toBe(1);
    expect(ends.sort()).toEqual(["dead_letter", "dead_letter", "done"]);
    expect(await soniq.jobs.get(healthy.id)).toMatchObject({ status: "done", result: 1 });
    expect(dead.sort()).toEqual(
      crashed
        .map((r) => `${r.id}:max_retries_exceeded:claimed for attempt 2 of 1: earlier runs never settled`)
        .sort(),
    );
    for (const { id } of crashed) {
      expect(await soniq.deadLetters.get(id)).toMatchObject({
        deadLetterReason: "max_retries_exceeded",
        attempts: 2,
      });
    }
  });
});
