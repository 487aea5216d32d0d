/**
 * Durable steps through the app API (DESIGN.md section 19) on the memory backend: a step runs once per job across
 * retries, occurrence names, limits, sleeps that give the worker back (the virtual clock), signals, the
 * transactional completion, the dead-letter replay's keep / discard / resolve, explain, and a backend without
 * the capability.
 */
import { describe, expect, it } from "vitest";
import { manualClock } from "../../testkit/src/clock.js";
import { isSoniqError, type Soniq } from "../src/index.js";
import { memoryApps, memoryBackend } from "./memory.js";
import { rejection } from "./support.js";

const app = memoryApps();

/** An app on a memory backend sharing a manual clock with it. */
function clocked() {
  const clock = manualClock(Date.now());
  const soniq = app({ clock }, memoryBackend({ now: clock.now }));
  return { soniq, clock };
}

/** Runs what is due now, one worker pass. */
const drain = (soniq: Soniq) => soniq.worker({ concurrency: 4 }).runOnce();

describe("steps", () => {
  it("steps/runs-once-across-retries: a done step is not run again by a later attempt; its value is the stored JSON copy", async () => {
    const soniq = app();
    const calls: string[] = [];
    const job = soniq.job(
      "steps.retry",
      async (_: Record<string, never>, ctx) => {
        const account = await ctx.step("create_account", () => {
          calls.push(`account@${ctx.attempt}`);
          return { id: 7, tags: ["new"] };
        });
        calls.push(`after@${ctx.attempt}:${JSON.stringify(account)}`);
        if (ctx.attempt === 1) throw new Error("flaky");
        return account;
      },
      { maxAttempts: 3, retry: { backoff: "fixed", delayMs: 0 } },
    );
    const handle = await job.enqueue({});
    await drain(soniq);
    await drain(soniq);
    expect(await soniq.jobs.waitFor(handle.id, { timeoutMs: 5_000 })).toEqual({
      status: "done",
      result: { id: 7, tags: ["new"] },
    });
    expect(calls).toEqual([
      "account@1",
      'after@1:{"id":7,"tags":["new"]}',
      'after@2:{"id":7,"tags":["new"]}',
    ]);
    const steps = await soniq.jobs.steps(handle.id);
    expect(steps.map((s) => [s.name, s.kind, s.state, s.attempt])).toEqual([
      ["create_account", "step", "done", 1],
    ]);
  });

  it("steps/occurrences-and-failed-error: a name used again gets #2, #3 in call order; a step that throws stores its error and the job retries", async () => {
    const { soniq, clock } = clocked();
    let run = 0;
    const job = soniq.job(
      "steps.loop",
      async (_: Record<string, never>, ctx) => {
        run++;
        const seen: number[] = [];
        for (let i = 0; i < 3; i++) seen.push(await ctx.step("item", () => i * 10 + run));
        await ctx.step("flaky", () => {
          if (run === 1) throw new Error("card declined");
          return "ok";
        });
        return seen;
      },
      { maxAttempts: 2, retry: { backoff: "fixed", delayMs: 60_000 } },
    );
    const handle = await job.enqueue({});
    await drain(soniq);
    const failed = await soniq.jobs.steps(handle.id);
    expect(failed.map((s) => [s.name, s.state])).toEqual([
      ["item", "done"],
      ["item#2", "done"],
      ["item#3", "done"],
      ["flaky", "failed"],
    ]);
    expect(failed[3]?.error).toContain("card declined");
    await clock.advance(60_000);
    await drain(soniq);
    expect(await soniq.jobs.waitFor(handle.id, { timeoutMs: 5_000 })).toEqual({
      status: "done",
      result: [1, 11, 21],
    });
    expect((await soniq.jobs.steps(handle.id)).at(-1)).toMatchObject({
      name: "flaky",
      state: "done",
      value: "ok",
      error: null,
    });
  });

  it("steps/limits: a value over maxStepValueBytes or not JSON, and a checkpoint past maxSteps, throw SONIQ_INVALID_ARGUMENT and store nothing", async () => {
    const soniq = app({ maxSteps: 3, maxStepValueBytes: 100 });
    const errors: unknown[] = [];
    const job = soniq.job(
      "steps.limits",
      async (_: Record<string, never>, ctx) => {
        for (const fn of [() => "x".repeat(200), () => ({ f: () => 1 }), () => BigInt(1)]) {
          errors.push(await rejection(ctx.step("big", fn as () => unknown)));
        }
        await ctx.step("a", () => 1);
        await ctx.step("b", () => 2);
        await ctx.sleep("c", 0);
        errors.push(await rejection(ctx.step("d", () => 4)));
        errors.push(await rejection(ctx.step("Bad Name", () => 1)));
        return "ok";
      },
      { maxAttempts: 1 },
    );
    const handle = await job.enqueue({});
    await drain(soniq);
    expect(errors.map((e) => (isSoniqError(e) ? e.code : String(e)))).toEqual(
      Array(5).fill("SONIQ_INVALID_ARGUMENT"),
    );
    expect((errors[3] as Error).message).toContain("maxSteps");
    expect((await soniq.jobs.steps(handle.id)).map((s) => s.name)).toEqual(["a", "b", "c"]);
  });

  it("steps/sleep-frees-the-worker: a long sleep puts the job back to queued (no attempt spent, explain says sleeping) and the next run after the wake time goes on", async () => {
    const { soniq, clock } = clocked();
    const runs: number[] = [];
    const job = soniq.job("steps.sleepy", async (_: Record<string, never>, ctx) => {
      runs.push(ctx.attempt);
      await ctx.step("before", () => "b");
      await ctx.sleep("grace", 3_600_000);
      return "woke";
    });
    const handle = await job.enqueue({});
    expect(await drain(soniq)).toBe(1);
    const row = await soniq.jobs.get(handle.id);
    expect(row).toMatchObject({ status: "queued", attempts: 0, workerId: null });
    expect(row?.scheduledAt.getTime()).toBe(clock.now() + 3_600_000);
    const explained = await soniq.jobs.explain(handle.id);
    expect(explained.reasons.map((r) => r.code)).toContain("sleeping");
    expect(await drain(soniq)).toBe(0);
    await clock.advance(3_600_000);
    expect(await drain(soniq)).toBe(1);
    expect(await soniq.jobs.waitFor(handle.id, { timeoutMs: 5_000 })).toEqual({
      status: "done",
      result: "woke",
    });
    expect(runs).toEqual([1, 1]);
    expect((await soniq.jobs.steps(handle.id)).map((s) => [s.name, s.kind, s.state])).toEqual([
      ["before", "step", "done"],
      ["grace", "sleep", "done"],
    ]);
  });

  it("steps/woken-when-due: a started worker claims a job it suspended when its sleep ends, not at its next poll", async () => {
    const soniq = app();
    const job = soniq.job("steps.nap", async (_: Record<string, never>, ctx) => {
      await ctx.sleep("nap", 1_200);
      return ctx.attempt;
    });
    const worker = soniq.worker({ pollIntervalMs: 600_000 });
    await worker.start();
    try {
      const handle = await job.enqueue({});
      // The poll is 10 minutes away: only the worker's own wake-up at the sleep's end can finish it in time.
      expect(await soniq.jobs.waitFor(handle.id, { timeoutMs: 20_000 })).toEqual({
        status: "done",
        result: 1,
      });
    } finally {
      await worker.stop();
    }
  }, 30_000);

  it("steps/each-woken-when-due: jobs suspended until different times are each claimed at their own, not at the poll", async () => {
    const soniq = app();
    const job = soniq.job("steps.naps", async ({ ms }: { ms: number }, ctx) => {
      await ctx.sleep("nap", ms);
      return ms;
    });
    const worker = soniq.worker({ pollIntervalMs: 600_000 });
    await worker.start();
    try {
      // The soonest wake time gets the worker's timer; the later ones must each get theirs after it.
      const handles = await Promise.all([1_100, 1_400, 1_700].map((ms) => job.enqueue({ ms })));
      for (const [i, handle] of handles.entries()) {
        expect(await soniq.jobs.waitFor(handle.id, { timeoutMs: 20_000 })).toEqual({
          status: "done",
          result: [1_100, 1_400, 1_700][i],
        });
      }
    } finally {
      await worker.stop();
    }
  }, 30_000);

  it("steps/short-sleep-in-process: a sleep under 1 s waits in the run (on the instance's clock) and never requeues", async () => {
    const soniq = app();
    const job = soniq.job("steps.short", async (_: Record<string, never>, ctx) => {
      await ctx.sleep("blink", 20);
      await ctx.sleepUntil("past", new Date(0));
      return ctx.attempt;
    });
    const handle = await job.enqueue({});
    await drain(soniq);
    expect(await soniq.jobs.waitFor(handle.id, { timeoutMs: 5_000 })).toEqual({ status: "done", result: 1 });
  });

  it("steps/signal-before-and-after-the-wait: a buffered signal is consumed at once; a waiting job is woken by one; a timeout returns null", async () => {
    const { soniq, clock } = clocked();
    const seen: unknown[] = [];
    const job = soniq.job("steps.approve", async (_: Record<string, never>, ctx) => {
      seen.push(await ctx.waitForSignal("early", { timeoutMs: 60_000 }));
      seen.push(await ctx.waitForSignal<{ by: string }>("approval", { timeoutMs: 86_400_000 }));
      seen.push(await ctx.waitForSignal("never", { timeoutMs: 60_000 }));
      return "finished";
    });
    const handle = await job.enqueue({});
    expect(await soniq.jobs.signal(handle.id, "early", 1, { key: "k" })).toEqual({
      status: "stored",
      woke: false,
      deadLetter: false,
    });
    expect((await soniq.jobs.signal(handle.id, "early", 2, { key: "k" })).status).toBe("duplicate");
    await drain(soniq);
    const waiting = await soniq.jobs.explain(handle.id);
    expect(waiting.reasons[0]).toMatchObject({
      code: "waiting_for_signal",
      evidence: { signal: "approval" },
    });
    expect(
      await soniq.jobs.signal(handle.id, "approval", { by: "ops" }, { actor: "ops@example.com" }),
    ).toEqual({
      status: "stored",
      woke: true,
      deadLetter: false,
    });
    await drain(soniq);
    expect((await soniq.jobs.get(handle.id))?.status).toBe("queued");
    await clock.advance(60_000);
    await drain(soniq);
    expect(await soniq.jobs.waitFor(handle.id, { timeoutMs: 5_000 })).toEqual({
      status: "done",
      result: "finished",
    });
    expect(seen.slice(-3)).toEqual([1, { by: "ops" }, null]);
    expect((await soniq.jobs.steps(handle.id)).map((s) => s.state)).toEqual(["done", "done", "timed_out"]);
    const audit = await soniq.audit.list({ action: "job.signal" });
    expect(audit.map((a) => [a.actor, a.outcome]).sort()).toEqual([
      ["api", "duplicate"],
      ["api", "ok"],
      ["ops@example.com", "ok"],
    ]);
  });

  it("steps/signal-errors: unknown id, finished job, bad payload and bad name are typed errors that store nothing", async () => {
    const soniq = app();
    const job = soniq.job("steps.quick", async () => "ok");
    const handle = await job.enqueue({});
    await drain(soniq);
    const codes = await Promise.all([
      rejection(soniq.jobs.signal("00000000-0000-7000-8000-000000000000", "go")),
      rejection(soniq.jobs.signal("not-an-id", "go")),
      rejection(soniq.jobs.signal(handle.id, "go")),
      rejection(soniq.jobs.signal(handle.id, "go", { f: () => 1 })),
      rejection(soniq.jobs.signal(handle.id, "go", "x".repeat(70_000))),
      rejection(soniq.jobs.signal(handle.id, "Not Valid")),
    ]);
    expect(codes.map((e) => (isSoniqError(e) ? e.code : String(e)))).toEqual([
      "SONIQ_JOB_NOT_FOUND",
      "SONIQ_JOB_NOT_FOUND",
      "SONIQ_JOB_FINISHED",
      "SONIQ_INVALID_ARGUMENT",
      "SONIQ_INVALID_ARGUMENT",
      "SONIQ_INVALID_ARGUMENT",
    ]);
  });

  it("steps/complete-in-transaction: ctx.complete commits the done and the result; the worker writes nothing more", async () => {
    const soniq = app();
    const applied: string[] = [];
    const job = soniq.job("steps.complete", async (_: Record<string, never>, ctx) =>
      ctx.complete({ transaction: true }, () => {
        applied.push("write");
        return { total: 3 };
      }),
    );
    const handle = await job.enqueue({});
    await drain(soniq);
    expect(await soniq.jobs.waitFor(handle.id, { timeoutMs: 5_000 })).toEqual({
      status: "done",
      result: { total: 3 },
    });
    expect(applied).toEqual(["write"]);
  });

  it("steps/replay-keep-resolve-discard: a dead letter resumes at the failed step with keep, takes an operator's value with resolve, starts clean with discard", async () => {
    const soniq = app();
    const runs: string[] = [];
    const job = soniq.job(
      "steps.order",
      async (_: Record<string, never>, ctx) => {
        const seat = await ctx.step("reserve", () => {
          runs.push("reserve");
          return 4;
        });
        const paid = await ctx.step("charge", (): { paymentId: string } => {
          runs.push("charge");
          throw new Error("declined");
        });
        return { seat, paid };
      },
      { maxAttempts: 1 },
    );
    const handle = await job.enqueue({});
    await drain(soniq);
    expect((await soniq.jobs.waitFor(handle.id, { timeoutMs: 5_000 })).status).toBe("dead_letter");
    expect((await soniq.jobs.steps(handle.id)).map((s) => [s.name, s.state])).toEqual([
      ["reserve", "done"],
      ["charge", "failed"],
    ]);
    const resolved = await soniq.deadLetters.replay(handle.id, {
      resolve: { charge: { paymentId: "manual-1" } },
      actor: "ops",
    });
    await drain(soniq);
    expect(await soniq.jobs.waitFor(resolved as string, { timeoutMs: 5_000 })).toEqual({
      status: "done",
      result: { seat: 4, paid: { paymentId: "manual-1" } },
    });
    expect(runs).toEqual(["reserve", "charge"]);
    const [entry] = await soniq.audit.list({ action: "dead_letter.replay" });
    expect(entry?.params).toMatchObject({ steps: "keep", resolve: { charge: { paymentId: "manual-1" } } });

    const again = await job.enqueue({});
    await drain(soniq);
    const discarded = await soniq.deadLetters.replay(again.id, { steps: "discard" });
    await drain(soniq);
    expect(runs).toEqual(["reserve", "charge", "reserve", "charge", "reserve", "charge"]);
    expect((await soniq.jobs.waitFor(discarded as string, { timeoutMs: 5_000 })).status).toBe("dead_letter");
    expect(
      isSoniqError(
        await rejection(soniq.deadLetters.replay(again.id, { steps: "all" as "keep" })),
        "SONIQ_INVALID_OPTIONS",
      ),
    ).toBe(true);
    const bulk = await soniq.deadLetters.replayWhere(
      { ids: [discarded as string] },
      { resolve: { charge: { paymentId: "bulk-1" } }, actor: "ops" },
    );
    expect(bulk.count).toBe(1);
    const [where] = await soniq.audit.list({ action: "dead_letter.replay_where" });
    expect(where?.params).toMatchObject({ steps: "keep", resolve: { charge: { paymentId: "bulk-1" } } });
  });

  it("steps/replay-audit-redacted: resolved values in the audit row go through redact", async () => {
    const soniq = app({ redact: ["**.token"] });
    const job = soniq.job(
      "steps.secret",
      async (_: Record<string, never>, ctx) =>
        ctx.step("charge", (): { token: string } => {
          throw new Error("declined");
        }),
      { maxAttempts: 1 },
    );
    const handle = await job.enqueue({});
    await drain(soniq);
    await soniq.deadLetters.replay(handle.id, { resolve: { charge: { token: "tok_secret_1" } } });
    const [entry] = await soniq.audit.list({ action: "dead_letter.replay" });
    expect(entry?.params).toMatchObject({ resolve: { charge: { token: "[redacted]" } } });
    expect(JSON.stringify(entry)).not.toContain("tok_secret_1");
  });

  it("steps/unsupported: on a backend without the steps capability every step call throws SONIQ_UNSUPPORTED naming it", async () => {
    const { steps: _, ...rest } = memoryBackend();
    const soniq = app({}, rest as ReturnType<typeof memoryBackend>);
    let error: unknown;
    const job = soniq.job(
      "steps.none",
      async (_: Record<string, never>, ctx) => {
        error = await rejection(ctx.step("a", () => 1));
        return "ok";
      },
      { maxAttempts: 1 },
    );
    await job.enqueue({});
    await drain(soniq);
    expect(error).toMatchObject({ code: "SONIQ_UNSUPPORTED", context: { capability: "steps" } });
  });
});
