/** `ctx.progress()`: checked at the call, coalesced onto the heartbeat, visible as `Job.progress`. */
import { describe, expect, it } from "vitest";
import type { ProgressUpdate } from "../src/contract/index.js";
import { isSoniqError } from "../src/index.js";
import { MAX_PROGRESS_BYTES } from "../src/jobs/progress.js";
import { progressPercent } from "../src/ops.js";
import { memoryApps, memoryBackend, overriding } from "./memory.js";
import { eventually, gate } from "./support.js";

const app = memoryApps();

/** A memory backend whose `runs.reportProgress` calls are recorded. */
function countingBackend() {
  const backend = memoryBackend();
  const writes: ProgressUpdate[][] = [];
  const writers: (string | undefined)[] = [];
  const counted = overriding(backend, "runs", {
    reportProgress: (updates: readonly ProgressUpdate[], workerId?: string) => {
      writes.push([...updates]);
      writers.push(workerId);
      return backend.runs.reportProgress?.(updates, workerId) ?? Promise.resolve(0);
    },
  });
  return { backend: counted, writes, writers };
}

describe("progress", () => {
  it("progress/coalesced-onto-heartbeat: 20,000 calls from two jobs cost a handful of writes, one per heartbeat", async () => {
    const { backend, writes, writers } = countingBackend();
    const soniq = app({}, backend);
    const release = gate();
    let calls = 0;
    soniq.job("progress.busy", async (args: { n: number }, ctx) => {
      for (let i = 1; i <= 10_000; i++) {
        ctx.progress({ done: i, of: 10_000, n: args.n });
        calls++;
        if (i % 1000 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      await release.promise;
      return "ok";
    });
    const a = await soniq.jobs.enqueue("progress.busy", { n: 1 });
    const b = await soniq.jobs.enqueue("progress.busy", { n: 2 });
    const worker = soniq.worker({ concurrency: 2, heartbeatIntervalMs: 100, pollIntervalMs: 20 });
    await worker.start();
    await eventually(async () => {
      expect((await soniq.jobs.get(a.id))?.progress).toEqual({ done: 10_000, of: 10_000, n: 1 });
      expect((await soniq.jobs.get(b.id))?.progress).toEqual({ done: 10_000, of: 10_000, n: 2 });
    });
    const writesWhileRunning = writes.length;
    release.open();
    await worker.stop();
    expect(calls).toBe(20_000);
    // Each write carries both jobs' latest values at once; the count follows the heartbeats, not the calls.
    expect(writesWhileRunning).toBeGreaterThanOrEqual(1);
    expect(writesWhileRunning).toBeLessThan(30);
    for (const write of writes) expect(new Set(write.map((u) => u.id)).size).toBe(write.length);
    // Nothing was reported after the last value was written: stop adds no write.
    expect(writes.length).toBe(writesWhileRunning);
    // Every write names the worker, so a run whose claim was lost cannot write over the next claim's value.
    expect(writers).toEqual(writes.map(() => worker.id));
  });

  it("progress/no-calls-no-writes: jobs that never report cost no progress write", async () => {
    const { backend, writes } = countingBackend();
    const soniq = app({}, backend);
    soniq.job("progress.quiet", async () => "ok");
    const { id } = await soniq.jobs.enqueue("progress.quiet", {});
    const worker = soniq.worker({ heartbeatIntervalMs: 20, pollIntervalMs: 20 });
    await worker.start();
    await eventually(async () => expect((await soniq.jobs.get(id))?.status).toBe("done"));
    await worker.stop();
    expect(writes).toEqual([]);
    expect((await soniq.jobs.get(id))?.progress).toBeNull();
  });

  it("progress/last-value-written-at-stop: a value reported just before the job ends lands when the worker stops", async () => {
    const { backend, writes } = countingBackend();
    const soniq = app({}, backend);
    soniq.job("progress.final", async (_args, ctx) => {
      ctx.progress(1);
      ctx.progress(100);
      return "ok";
    });
    const { id } = await soniq.jobs.enqueue("progress.final", {});
    const worker = soniq.worker({ heartbeatIntervalMs: 30_000, pollIntervalMs: 20 });
    await worker.start();
    await eventually(async () => expect((await soniq.jobs.get(id))?.status).toBe("done"));
    await worker.stop();
    expect(writes).toHaveLength(1);
    expect(writes[0]).toEqual([{ id, attempt: 1, value: 100 }]);
    const job = await soniq.jobs.get(id);
    expect(job?.progress).toBe(100);
    expect(job?.status).toBe("done");
  });

  it("progress/run-once-writes-too: runOnce writes the last value before it returns", async () => {
    const soniq = app();
    soniq.job("progress.once", async (_args, ctx) => {
      ctx.progress({ phase: "done" });
      return "ok";
    });
    const { id } = await soniq.jobs.enqueue("progress.once", {});
    expect(await soniq.worker().runOnce()).toBe(1);
    expect((await soniq.jobs.get(id))?.progress).toEqual({ phase: "done" });
  });

  it("progress/too-large-or-not-json: a typed error in the handler, nothing stored", async () => {
    const { backend, writes } = countingBackend();
    const soniq = app({}, backend);
    const errors: unknown[] = [];
    soniq.job("progress.bad", async (_args, ctx) => {
      for (const value of [
        "x".repeat(MAX_PROGRESS_BYTES),
        { text: "é".repeat(MAX_PROGRESS_BYTES / 2) },
        Number.NaN,
        new Date(),
        () => 1,
      ]) {
        try {
          ctx.progress(value);
        } catch (err) {
          errors.push(err);
        }
      }
      ctx.progress("x".repeat(MAX_PROGRESS_BYTES - 2)); // exactly the limit with its quotes
      return "ok";
    });
    const { id } = await soniq.jobs.enqueue("progress.bad", {});
    expect(await soniq.worker().runOnce()).toBe(1);
    expect(errors).toHaveLength(5);
    for (const err of errors) expect(isSoniqError(err, "SONIQ_INVALID_ARGUMENT")).toBe(true);
    expect((errors[0] as Error).message).toContain(`more than ${MAX_PROGRESS_BYTES}`);
    expect((errors[1] as Error).message).toContain("bytes as JSON"); // bytes, not characters
    expect(writes.flat().map((u) => u.value)).toEqual(["x".repeat(MAX_PROGRESS_BYTES - 2)]);
    expect((await soniq.jobs.get(id))?.progress).toBe("x".repeat(MAX_PROGRESS_BYTES - 2));
  });

  it("progress/value-is-a-snapshot: mutating the object after the call does not change what is written", async () => {
    const soniq = app();
    soniq.job("progress.snapshot", async (_args, ctx) => {
      const state = { step: 1 };
      ctx.progress(state);
      state.step = 2;
      return "ok";
    });
    const { id } = await soniq.jobs.enqueue("progress.snapshot", {});
    await soniq.worker().runOnce();
    expect((await soniq.jobs.get(id))?.progress).toEqual({ step: 1 });
  });

  it("progress/percent: numbers are percentages; objects say it with percent or done/current of total", () => {
    expect(progressPercent(42.5)).toBe(42.5);
    expect(progressPercent(140)).toBe(100);
    expect(progressPercent(-3)).toBe(0);
    expect(progressPercent({ percent: 10 })).toBe(10);
    expect(progressPercent({ done: 3, total: 4 })).toBe(75);
    expect(progressPercent({ current: 1, total: 8, phase: "upload" })).toBe(12.5);
    expect(progressPercent({ done: 3, total: 0 })).toBeNull();
    expect(progressPercent("half")).toBeNull();
    expect(progressPercent([50])).toBeNull();
    expect(progressPercent(null)).toBeNull();
  });
});
