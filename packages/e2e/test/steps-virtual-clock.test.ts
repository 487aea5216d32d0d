/**
 * Durable sleeps under clock jumps (issue 40 item 8), on the memory backend with a virtual clock: the testkit's
 * `manualClock()` drives the instance (`new Soniq({ clock })`, in-process waits) and the backend (`memoryBackend({
 * now })`, due times), while a started worker polls in real time. Time only moves when the test says so.
 *
 * - A job sleeping 1 h is not run while its worker keeps polling, nor 1 ms before the wake time; it runs once
 *   when the clock jumps to it. A retry after the wake-up passes the stored sleep (no second hour), and a
 *   `sleepUntil` already in the past returns at once.
 * - A wake time is never stretched by a later attempt: a run waiting in process (a sleep under 1 s) is given
 *   back by a worker's shutdown 300 ms in; the next attempt waits only the 500 ms left, to the stored wake time.
 */
import { memoryBackend } from "@soniq/backend-memory";
import { type Backend, Soniq, type Worker } from "@soniq/core";
import { manualClock } from "@soniq/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { eventually } from "./runtime-support.js";

const HOUR = 3_600_000;

/** The memory backend on the clock, with its claims counted (each is one poll of a worker). */
function clockedBackend(now: () => number): { backend: Backend<unknown>; claims: () => number } {
  const backend = memoryBackend({ now });
  let claims = 0;
  const claim = backend.runs.claim.bind(backend.runs);
  return {
    backend: {
      ...backend,
      runs: {
        ...backend.runs,
        claim: (...args: Parameters<typeof claim>) => {
          claims++;
          return claim(...args);
        },
      },
    },
    claims: () => claims,
  };
}

describe("steps/virtual-clock on memory", () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  async function started(worker: Worker): Promise<Worker> {
    cleanups.push(() => worker.stop());
    await worker.start();
    return worker;
  }

  it("steps/virtual-clock-hour-sleep: a job sleeping 1 h is not run before the clock gets there, runs once when it jumps; a retry and a past sleepUntil add no time", async () => {
    const start = Date.UTC(2026, 0, 1);
    const clock = manualClock(start);
    const { backend, claims } = clockedBackend(clock.now);
    const soniq = new Soniq({ backend, clock });
    cleanups.push(() => soniq.close());
    const runs: number[] = [];
    const effects: string[] = [];
    const job = soniq.job(
      "steps.hour",
      async (_args: Record<string, never>, ctx) => {
        runs.push(clock.now() - start);
        await ctx.step("before", () => effects.push("before"));
        await ctx.sleep("nap", HOUR);
        await ctx.sleepUntil("half_past", new Date(start + HOUR / 2));
        await ctx.step("notify", () => {
          effects.push(`notify@${ctx.attempt}`);
          if (effects.filter((e) => e.startsWith("notify")).length === 1) throw new Error("flaky notify");
          return "sent";
        });
        return { finishedAt: clock.now() - start };
      },
      { maxAttempts: 3, retry: { backoff: "fixed", delayMs: 0 } },
    );
    await started(
      soniq.worker({ pollIntervalMs: 10, heartbeatIntervalMs: 50, maintenanceIntervalMs: 600_000 }),
    );
    const { id } = await job.enqueue({});
    await eventually(async () => {
      expect(await soniq.jobs.get(id)).toMatchObject({ status: "queued", attempts: 0 });
      expect((await soniq.jobs.steps(id)).map((s) => [s.name, s.state, s.wakeAt?.getTime()])).toEqual([
        ["before", "done", undefined],
        ["nap", "waiting", start + HOUR],
      ]);
    });
    const polled = async () => {
      // Five more polls of the worker, then the job is still asleep.
      const seen = claims();
      await eventually(() => expect(claims()).toBeGreaterThanOrEqual(seen + 5));
      expect(await soniq.jobs.get(id)).toMatchObject({ status: "queued", attempts: 0 });
      expect(runs).toEqual([0]);
    };
    await polled();
    await clock.advance(HOUR - 1);
    await polled();

    await clock.advance(1);
    await eventually(async () => {
      expect(await soniq.jobs.get(id)).toMatchObject({
        status: "done",
        attempts: 2,
        result: { finishedAt: HOUR },
      });
    });
    // Run 1 suspended, run 2 woke at the hour and its notify failed, run 3 (the retry) passed the stored sleep.
    expect(runs).toEqual([0, HOUR, HOUR]);
    expect(effects).toEqual(["before", "notify@1", "notify@2"]);
    expect(
      (await soniq.jobs.steps(id)).map((s) => [
        s.name,
        s.kind,
        s.state,
        s.attempt,
        s.wakeAt === null ? null : s.wakeAt.getTime() - start,
      ]),
    ).toEqual([
      ["before", "step", "done", 1, null],
      ["nap", "sleep", "done", 1, HOUR],
      ["half_past", "sleep", "done", 1, HOUR / 2],
      ["notify", "step", "done", 2, null],
    ]);
  });

  it("steps/virtual-clock-wake-not-stretched: a sleep waiting in process, given back by a shutdown 300 ms in, ends at its stored wake time on the next attempt, not 800 ms after it", async () => {
    const start = Date.UTC(2026, 0, 1);
    const clock = manualClock(start);
    const { backend } = clockedBackend(clock.now);
    const soniq = new Soniq({ backend, clock });
    cleanups.push(() => soniq.close());
    const runs: string[] = [];
    let before = 0;
    const job = soniq.job("steps.short_nap", async (_args: Record<string, never>, ctx) => {
      runs.push(`${ctx.workerId}@${clock.now() - start}`);
      await ctx.step("before", () => ++before);
      await ctx.sleep("nap", 800);
      return { wokeAt: clock.now() - start };
    });
    const options = { pollIntervalMs: 10, heartbeatIntervalMs: 50, maintenanceIntervalMs: 600_000 };
    const first = await started(soniq.worker({ ...options, shutdownTimeoutMs: 20 }));
    const { id } = await job.enqueue({});
    // In process: the run holds the job and waits on the clock (one timer, at +800 ms).
    const waitingIn = async (workerId: string) =>
      eventually(async () => {
        expect(await soniq.jobs.get(id)).toMatchObject({ status: "processing", workerId });
        expect((await soniq.jobs.steps(id)).map((s) => [s.name, s.state, s.wakeAt?.getTime()])).toEqual([
          ["before", "done", undefined],
          ["nap", "waiting", start + 800],
        ]);
        expect(clock.pending()).toBe(1);
      });
    await waitingIn(first.id);
    await clock.advance(300);
    await first.stop();
    expect(await soniq.jobs.get(id)).toMatchObject({ status: "queued", workerId: null });

    const second = await started(soniq.worker(options));
    await waitingIn(second.id);
    await clock.advance(499);
    expect(await soniq.jobs.get(id)).toMatchObject({ status: "processing", workerId: second.id });
    await clock.advance(1);
    await eventually(async () => {
      expect(await soniq.jobs.get(id)).toMatchObject({ status: "done", result: { wokeAt: 800 } });
    });
    expect(runs).toEqual([`${first.id}@0`, `${second.id}@300`]);
    expect(before).toBe(1);
    const nap = (await soniq.jobs.steps(id)).find((s) => s.name === "nap");
    expect(nap).toMatchObject({ state: "done" });
    expect(nap?.wakeAt?.getTime()).toBe(start + 800);
    expect(nap?.finishedAt?.getTime()).toBe(start + 800);
  });
});
