/** Runtime scenarios on the memory backend: outcomes, retries, timeouts. */

import { describe, expect, it } from "vitest";
import { z } from "zod";
import { JobAbortedError, PermanentError, type RetryContext, snooze } from "../src/index.js";
import { memoryApps, memoryBackend, overriding } from "./memory.js";

const app = memoryApps();

describe("runtime/outcomes", () => {
  it("runtime/done-stores-result: the return value is stored and readable", async () => {
    const soniq = app();
    const add = soniq.job("math.add", async (args: { a: number; b: number }) => ({ sum: args.a + args.b }));
    const { id, deduplicated } = await add.enqueue({ a: 2, b: 3 });
    expect(deduplicated).toBe(false);
    expect(await soniq.worker().runOnce()).toBe(1);
    expect(await soniq.getResult(id)).toEqual({ sum: 5 });
    const job = await soniq.getJob(id);
    expect(job).toMatchObject({
      status: "done",
      attempts: 1,
      jobName: "math.add",
      queue: "default",
      priority: 100,
    });
  });

  it("runtime/result-ttl-zero-deletes: resultTtlMs 0 deletes the row on success", async () => {
    const soniq = app({ resultTtlMs: 0 });
    const job = soniq.job("x.y", async () => "ok");
    const { id } = await job.enqueue({});
    await soniq.worker().runOnce();
    expect(await soniq.getJob(id)).toBeNull();
    expect(await soniq.getResult(id)).toBeNull();
  });

  it("runtime/retry-fixed: a failing job retries with a fixed delay and then succeeds", async () => {
    const soniq = app();
    let runs = 0;
    const flaky = soniq.job(
      "flaky.fixed",
      async () => {
        runs++;
        if (runs < 3) throw new Error(`boom ${runs}`);
        return runs;
      },
      { maxAttempts: 3, retry: { backoff: "fixed", delayMs: 0 } },
    );
    const { id } = await flaky.enqueue({});
    expect(await soniq.worker().runOnce()).toBe(3);
    const job = await soniq.getJob(id);
    expect(job).toMatchObject({ status: "done", attempts: 3, result: 3 });
  });

  it("runtime/retry-list: delays follow the list per attempt and the last entry repeats", async () => {
    const soniq = app();
    const failing = soniq.job(
      "always.fails",
      async () => {
        throw new TypeError("nope");
      },
      { maxAttempts: 5, retry: { delaysMs: [0, 60_000] } },
    );
    const { id } = await failing.enqueue({});
    const before = Date.now();
    expect(await soniq.worker().runOnce()).toBe(2);
    const job = await soniq.getJob(id);
    expect(job?.status).toBe("queued");
    expect(job?.attempts).toBe(2);
    expect(job?.scheduledAt.getTime()).toBeGreaterThanOrEqual(before + 59_000);
    expect(job?.lastError).toMatch(/^TypeError: nope\n\s+at /);
  });

  it("runtime/retry-function: the function sees the attempt; null dead-letters with permanent_failure", async () => {
    const soniq = app();
    const seen: RetryContext[] = [];
    const job = soniq.job(
      "policy.fn",
      async () => {
        throw new Error("bad");
      },
      {
        maxAttempts: 5,
        retry: (ctx) => {
          seen.push(ctx);
          return ctx.attempt < 2 ? 0 : null;
        },
      },
    );
    const { id } = await job.enqueue({});
    expect(await soniq.worker().runOnce()).toBe(2);
    expect(seen.map((c) => [c.attempt, c.maxAttempts])).toEqual([
      [1, 5],
      [2, 5],
    ]);
    expect(seen[0]?.error).toMatchObject({ message: "bad" });
    expect(await soniq.getJob(id)).toBeNull();
    const dead = await soniq.deadLetter.get(id);
    expect(dead).toMatchObject({ deadLetterReason: "permanent_failure", attempts: 2, jobName: "policy.fn" });
  });

  it("runtime/retry-exhausted: the last failed attempt dead-letters with max_retries_exceeded", async () => {
    const soniq = app();
    const job = soniq.job(
      "exhaust.me",
      async () => {
        throw new Error("still broken");
      },
      { maxAttempts: 2, retry: { delaysMs: [0] } },
    );
    const { id } = await job.enqueue({ k: 1 });
    await soniq.worker().runOnce();
    const dead = await soniq.deadLetter.get(id);
    expect(dead).toMatchObject({ deadLetterReason: "max_retries_exceeded", attempts: 2, args: { k: 1 } });
    expect(dead?.lastError).toContain("Error: still broken");
    expect(await soniq.getQueueStats()).toEqual({
      total: 1,
      queued: 0,
      processing: 0,
      done: 0,
      dead_letter: 1,
      cancelled: 0,
    });
  });

  it("runtime/exponential-default: the default policy waits (capped full jitter) before the next attempt", async () => {
    const soniq = app({
      retry: { backoff: "exponential", delayMs: 10_000, maxDelayMs: 20_000, jitter: false },
    });
    const job = soniq.job("exp.fail", async () => {
      throw new Error("x");
    });
    const { id } = await job.enqueue({});
    const before = Date.now();
    expect(await soniq.worker().runOnce()).toBe(1);
    const row = await soniq.getJob(id);
    expect(row?.status).toBe("queued");
    expect(row?.scheduledAt.getTime()).toBeGreaterThanOrEqual(before + 9_000);
  });

  it("runtime/permanent-error: PermanentError dead-letters at once", async () => {
    const soniq = app();
    const job = soniq.job(
      "perm.fail",
      async () => {
        throw new PermanentError("card declined");
      },
      { maxAttempts: 10 },
    );
    const { id } = await job.enqueue({});
    expect(await soniq.worker().runOnce()).toBe(1);
    const dead = await soniq.deadLetter.get(id);
    expect(dead).toMatchObject({ deadLetterReason: "permanent_failure", attempts: 1 });
    expect(dead?.lastError).toContain("PermanentError: card declined");
  });

  it("runtime/snooze: requeues without spending an attempt and records SNOOZE: reason", async () => {
    const soniq = app();
    const attempts: number[] = [];
    const job = soniq.job("snooze.me", async (_args, ctx) => {
      attempts.push(ctx.attempt);
      return attempts.length === 1 ? snooze(60_000, "rate limited") : "ok";
    });
    const { id } = await job.enqueue({});
    await soniq.worker().runOnce();
    const row = await soniq.getJob(id);
    expect(row).toMatchObject({ status: "queued", attempts: 0, lastError: "SNOOZE: rate limited" });
    expect(row?.scheduledAt.getTime()).toBeGreaterThan(Date.now() + 50_000);

    const zero = soniq.job("snooze.zero", async (_args, ctx) =>
      ctx.attempt === 1 && attempts.push(0) < 3 ? snooze(0) : "done",
    );
    const second = await zero.enqueue({});
    await soniq.worker().runOnce();
    expect(await soniq.getJob(second.id)).toMatchObject({ status: "done", attempts: 1 });
  });

  it("runtime/job-not-found: a job with no handler on this worker dead-letters with job_not_found", async () => {
    const backend = memoryBackend();
    const producer = app({ allowUnknownJobNames: true }, backend);
    const consumer = app({}, backend);
    const { id } = await producer.enqueue("only.elsewhere", { a: 1 });
    expect(await consumer.worker().runOnce()).toBe(1);
    const dead = await consumer.deadLetter.get(id);
    expect(dead).toMatchObject({ deadLetterReason: "job_not_found", jobName: "only.elsewhere" });
  });

  it("runtime/invalid-arguments: args failing the schema at run time dead-letter with invalid_arguments", async () => {
    const backend = memoryBackend();
    const producer = app({ allowUnknownJobNames: true }, backend);
    const consumer = app({}, backend);
    let ran = false;
    consumer.job(
      "typed.job",
      async () => {
        ran = true;
      },
      { schema: z.object({ n: z.number() }) },
    );
    const { id } = await producer.enqueue("typed.job", { n: "not a number" });
    await consumer.worker().runOnce();
    expect(ran).toBe(false);
    const dead = await consumer.deadLetter.get(id);
    expect(dead?.deadLetterReason).toBe("invalid_arguments");
    expect(dead?.lastError).toContain("n");
  });

  it("runtime/schema-parses-before-handler: the handler gets the schema's output", async () => {
    const soniq = app();
    let received: unknown;
    const job = soniq.job(
      "typed.defaults",
      async (args) => {
        received = args;
        return args.count * 2;
      },
      { schema: z.object({ count: z.number().default(21) }) },
    );
    const { id } = await job.enqueue({});
    await soniq.worker().runOnce();
    expect(received).toEqual({ count: 21 });
    expect(await soniq.getResult(id)).toBe(42);
  });

  it("runtime/non-json-result-fails-the-attempt: a BigInt result is a failed attempt, not a broken batch", async () => {
    const soniq = app();
    const bad = soniq.job("bad.result", async () => 10n, { maxAttempts: 1 });
    const good = soniq.job("good.result", async () => "fine");
    const b = await bad.enqueue({});
    const g = await good.enqueue({});
    await soniq.worker().runOnce();
    expect((await soniq.deadLetter.get(b.id))?.lastError).toContain("not JSON");
    expect(await soniq.getResult(g.id)).toBe("fine");
  });

  it("runtime/last-error-capped: last_error keeps name, message and stack within 8 KiB", async () => {
    const soniq = app();
    const job = soniq.job(
      "huge.error",
      async () => {
        throw new RangeError("x".repeat(20_000));
      },
      { maxAttempts: 1 },
    );
    const { id } = await job.enqueue({});
    await soniq.worker().runOnce();
    const dead = await soniq.deadLetter.get(id);
    expect(dead?.lastError?.length).toBe(8192);
    expect(dead?.lastError?.startsWith("RangeError: xxx")).toBe(true);
  });
});

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
    const dead = await soniq.deadLetter.get(id);
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
    expect((await soniq.deadLetter.get(id))?.lastError).toContain("timed out");
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
    expect(await soniq.getJob(id)).toMatchObject({ status: "done", attempts: 1, result: "finished in time" });
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
    await soniq.enqueueMany(Array.from({ length: 40 }, (_, i) => ({ job, args: { i } })));
    const worker = soniq.worker({ concurrency: 20 });
    const reported: string[] = [];
    worker.on("job:done", () => void reported.push("done"));
    worker.on("job:dead_letter", ({ reason }) => void reported.push(reason));
    expect(await worker.runOnce()).toBe(40);
    expect(await soniq.getQueueStats()).toMatchObject({ done: 20, dead_letter: 20 });
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
    const [bad, good] = await soniq.enqueueMany([
      { job: odd, args: {} },
      { job: fine, args: {} },
    ]);
    expect(await soniq.worker({ concurrency: 2 }).runOnce()).toBe(2);
    const dead = await soniq.deadLetter.get(bad?.id as string);
    expect(dead?.lastError).toContain("Error: bad\ufffdbyte \ufffdhalf");
    expect(await soniq.getResult(good?.id as string)).toBe("ok");
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
    const crashed = await soniq.enqueueMany(
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
    expect(await soniq.getJob(healthy.id)).toMatchObject({ status: "done", result: 1 });
    expect(dead.sort()).toEqual(
      crashed
        .map((r) => `${r.id}:max_retries_exceeded:claimed for attempt 2 of 1: earlier runs never settled`)
        .sort(),
    );
    for (const { id } of crashed) {
      expect(await soniq.deadLetter.get(id)).toMatchObject({
        deadLetterReason: "max_retries_exceeded",
        attempts: 2,
      });
    }
  });
});
