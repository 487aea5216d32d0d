/** Runtime scenarios on the memory backend: outcomes and retries (timeouts and settling: runtime-settle.test.ts). */

import { describe, expect, it } from "vitest";
import { z } from "zod";
import { PermanentError, type RetryContext, snooze } from "../src/index.js";
import { memoryApps, memoryBackend } from "./memory.js";

const app = memoryApps();

describe("runtime/outcomes", () => {
  it("runtime/done-stores-result: the return value is stored and readable", async () => {
    const soniq = app();
    const add = soniq.job("math.add", async (args: { a: number; b: number }) => ({ sum: args.a + args.b }));
    const { id, deduplicated } = await add.enqueue({ a: 2, b: 3 });
    expect(deduplicated).toBe(false);
    expect(await soniq.worker().runOnce()).toBe(1);
    expect((await soniq.jobs.get(id))?.result ?? null).toEqual({ sum: 5 });
    const job = await soniq.jobs.get(id);
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
    expect(await soniq.jobs.get(id)).toBeNull();
    expect((await soniq.jobs.get(id))?.result ?? null).toBeNull();
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
    const job = await soniq.jobs.get(id);
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
    const job = await soniq.jobs.get(id);
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
    expect(await soniq.jobs.get(id)).toBeNull();
    const dead = await soniq.deadLetters.get(id);
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
    const dead = await soniq.deadLetters.get(id);
    expect(dead).toMatchObject({ deadLetterReason: "max_retries_exceeded", attempts: 2, args: { k: 1 } });
    expect(dead?.lastError).toContain("Error: still broken");
    expect(await soniq.jobs.stats()).toEqual({
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
    const row = await soniq.jobs.get(id);
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
    const dead = await soniq.deadLetters.get(id);
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
    const row = await soniq.jobs.get(id);
    expect(row).toMatchObject({ status: "queued", attempts: 0, lastError: "SNOOZE: rate limited" });
    expect(row?.scheduledAt.getTime()).toBeGreaterThan(Date.now() + 50_000);

    const zero = soniq.job("snooze.zero", async (_args, ctx) =>
      ctx.attempt === 1 && attempts.push(0) < 3 ? snooze(0) : "done",
    );
    const second = await zero.enqueue({});
    await soniq.worker().runOnce();
    expect(await soniq.jobs.get(second.id)).toMatchObject({ status: "done", attempts: 1 });
  });

  it("runtime/job-not-found: a job with no handler on this worker dead-letters with job_not_found", async () => {
    const backend = memoryBackend();
    const producer = app({ allowUnknownJobNames: true }, backend);
    const consumer = app({}, backend);
    const { id } = await producer.jobs.enqueue("only.elsewhere", { a: 1 });
    expect(await consumer.worker().runOnce()).toBe(1);
    const dead = await consumer.deadLetters.get(id);
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
    const { id } = await producer.jobs.enqueue("typed.job", { n: "not a number" });
    await consumer.worker().runOnce();
    expect(ran).toBe(false);
    const dead = await consumer.deadLetters.get(id);
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
    expect((await soniq.jobs.get(id))?.result ?? null).toBe(42);
  });

  it("runtime/non-json-result-fails-the-attempt: a BigInt result is a failed attempt, not a broken batch", async () => {
    const soniq = app();
    const bad = soniq.job("bad.result", async () => 10n, { maxAttempts: 1 });
    const good = soniq.job("good.result", async () => "fine");
    const b = await bad.enqueue({});
    const g = await good.enqueue({});
    await soniq.worker().runOnce();
    expect((await soniq.deadLetters.get(b.id))?.lastError).toContain("not JSON");
    expect((await soniq.jobs.get(g.id))?.result ?? null).toBe("fine");
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
    const dead = await soniq.deadLetters.get(id);
    expect(dead?.lastError?.length).toBe(8192);
    expect(dead?.lastError?.startsWith("RangeError: xxx")).toBe(true);
  });
});
