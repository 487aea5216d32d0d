/**
 * One enqueue path: a schedule's fire, its declaration and a dead-letter replay prepare their job as
 * `enqueue` does (defaults, the JSON check, the job's Standard Schema), so what enqueue refuses they refuse.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { manualClock } from "../../testkit/src/clock.js";
import { isSoniqError, type SoniqError } from "../src/common/errors.js";
import type { NewJob } from "../src/contract/index.js";
import { deadLetterAllDue, memoryApps, memoryBackend } from "./memory.js";

const app = memoryApps();
const MINUTE = 60_000;
const report = z.object({ day: z.string() });

function thrown(fn: () => unknown): SoniqError {
  try {
    fn();
  } catch (err) {
    if (isSoniqError(err)) return err;
    throw err;
  }
  throw new Error("expected a SoniqError, nothing was thrown");
}

async function rejected(promise: Promise<unknown>): Promise<SoniqError> {
  try {
    await promise;
  } catch (err) {
    if (isSoniqError(err)) return err;
    throw err;
  }
  throw new Error("expected a SoniqError, the call resolved");
}

function scheduling() {
  const clock = manualClock(Date.UTC(2026, 0, 1));
  const backend = memoryBackend({ now: clock.now });
  return { clock, soniq: app({ clock }, backend) };
}

describe("enqueue-path/schedules", () => {
  it("enqueue-path/schedule-refused-at-declaration: args that fail the job's schema throw SONIQ_TASK_ARGS_INVALID from schedules.declare()", () => {
    const { soniq } = scheduling();
    const job = soniq.job("reports.daily", async () => "ok", { schema: report });
    const err = thrown(() => soniq.schedules.declare(job, { every: "1m", args: { day: 3 } as never }));
    expect(err.code).toBe("SONIQ_TASK_ARGS_INVALID");
    expect(err.message).toContain('Schedule "reports.daily"');
    expect(err.context).toMatchObject({ schedule: "reports.daily", field: "args", name: "reports.daily" });
    // Nothing was declared: the same name declares fine with good args.
    expect(soniq.schedules.declare(job, { every: "1m", args: { day: "mon" } }).name).toBe("reports.daily");
  });

  it("enqueue-path/schedule-refused-at-fire: a schedule declared before its job is recorded skipped (invalid_args) at each tick, and the scheduler moves on", async () => {
    const { soniq, clock } = scheduling();
    soniq.schedules.declare("reports.daily", { every: "1m", args: { day: 3 } });
    soniq.schedules.declare("reports.fine", { every: "1m", args: { day: "mon" } });
    soniq.job("reports.daily", async () => "ok", { schema: report });
    soniq.job("reports.fine", async () => "ok", { schema: report });
    const scheduler = soniq.scheduler({ checkIntervalMs: 1000 });
    await scheduler.start();
    await clock.advance(2 * MINUTE);
    await scheduler.stop();

    const bad = await soniq.schedules.history("reports.daily");
    expect(bad.map((t) => [t.outcome, t.reason, t.jobId])).toEqual([
      ["skipped", "invalid_args", null],
      ["skipped", "invalid_args", null],
    ]);
    const fine = await soniq.schedules.history("reports.fine");
    expect(fine.map((t) => t.outcome)).toEqual(["fired", "fired"]);
    const jobs = await soniq.jobs.list({});
    expect(jobs.map((j) => j.jobName)).toEqual(["reports.fine", "reports.fine"]);
    // The bad schedule's next fire moved on with the clock: no tick is retried in a loop.
    expect((await soniq.schedules.get("reports.daily"))?.nextRunAt?.getTime()).toBe(
      Date.UTC(2026, 0, 1) + 3 * MINUTE,
    );
  });

  it("enqueue-path/trigger-refused: trigger() rejects with the enqueue's error and writes no tick and no job", async () => {
    const { soniq } = scheduling();
    soniq.schedules.declare("reports.daily", { every: "1h", args: { day: 3 } });
    soniq.job("reports.daily", async () => "ok", { schema: report });
    const err = await rejected(soniq.schedules.trigger("reports.daily"));
    expect(err.code).toBe("SONIQ_TASK_ARGS_INVALID");
    expect(await soniq.schedules.history("reports.daily")).toEqual([]);
    expect(await soniq.jobs.list({})).toEqual([]);
  });

  it("enqueue-path/schedule-fire-uses-job-defaults: a fired job gets the job's unique flag and args hash as enqueue gives them", async () => {
    const { soniq } = scheduling();
    soniq.job("reports.once", async () => "ok", { unique: true, schema: report });
    soniq.schedules.declare("reports.once", { every: "1h", args: { day: "mon" } });
    const first = await soniq.schedules.trigger("reports.once");
    const enqueued = await soniq.jobs.enqueue("reports.once", { day: "mon" });
    expect(enqueued).toEqual({ id: first, deduplicated: true });
  });
});

describe("enqueue-path/replays", () => {
  const deadJob = (args: unknown): NewJob => ({
    id: randomUUID(),
    jobName: "reports.daily",
    args,
    argsHash: null,
    queue: "reports",
    priority: 7,
    maxAttempts: 4,
    scheduledAt: null,
    dedupKey: null,
    unique: false,
    producerId: null,
    group: null,
    flowId: null,
    stepRef: null,
    argsVersion: null,
    traceId: null,
    traceContext: null,
  });

  async function deadLetters(backend: ReturnType<typeof memoryBackend>, args: unknown[]) {
    const jobs = args.map(deadJob);
    await backend.jobs.enqueueMany(jobs, {});
    await deadLetterAllDue(backend);
    return jobs.map((j) => j.id);
  }

  it("enqueue-path/replay-refused: a dead letter whose args fail the job's schema is not replayed (SONIQ_TASK_ARGS_INVALID, nothing changes)", async () => {
    const backend = memoryBackend();
    const soniq = app({}, backend);
    soniq.job("reports.daily", async () => "ok", { schema: report });
    const [bad] = await deadLetters(backend, [{ day: 3 }]);
    const err = await rejected(soniq.deadLetters.replay(bad as string));
    expect(err.code).toBe("SONIQ_TASK_ARGS_INVALID");
    expect(await soniq.jobs.list({})).toEqual([]);
    expect((await soniq.deadLetters.get(bad as string))?.resurrectionCount).toBe(0);
  });

  it("enqueue-path/replay-prepared: a replay keeps the dead letter's queue, priority and max attempts unless overridden", async () => {
    const backend = memoryBackend();
    const soniq = app({}, backend);
    soniq.job("reports.daily", async () => "ok", { schema: report, queue: "elsewhere", maxAttempts: 9 });
    const [kept, moved] = await deadLetters(backend, [{ day: "mon" }, { day: "tue" }]);
    const keptId = await soniq.deadLetters.replay(kept as string);
    const movedId = await soniq.deadLetters.replay(moved as string, { queue: "urgent", priority: 1 });
    expect(await soniq.jobs.get(keptId as string)).toMatchObject({
      queue: "reports",
      priority: 7,
      maxAttempts: 4,
    });
    expect(await soniq.jobs.get(movedId as string)).toMatchObject({
      queue: "urgent",
      priority: 1,
      maxAttempts: 4,
    });
  });

  it("enqueue-path/replay-where-refuses-per-row: replayWhere replays the good rows and leaves refused ones in place, counted", async () => {
    const backend = memoryBackend();
    const soniq = app({}, backend);
    soniq.job("reports.daily", async () => "ok", { schema: report });
    const [good, bad] = await deadLetters(backend, [{ day: "mon" }, { day: 3 }]);
    expect(await soniq.deadLetters.replayWhere({ jobName: "reports.daily" })).toEqual({
      count: 1,
      refused: 1,
      dryRun: false,
    });
    expect((await soniq.jobs.list({})).map((j) => j.args)).toEqual([{ day: "mon" }]);
    expect((await soniq.deadLetters.get(good as string))?.resurrectionCount).toBe(1);
    expect((await soniq.deadLetters.get(bad as string))?.resurrectionCount).toBe(0);
    const [audit] = await soniq.audit.list({ action: "dead_letter.replay_where" });
    expect(audit?.details).toEqual({ count: 1, refused: 1 });
  });
});
