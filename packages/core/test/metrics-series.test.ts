/** Persisted per-minute metrics on the memory backend: batched by the worker, read by metrics.series. */
import { describe, expect, it } from "vitest";
import { isSoniqError } from "../src/common/errors.js";
import { memoryApps, memoryBackend, overriding } from "./memory.js";

const app = memoryApps();

describe("metrics/persisted", () => {
  it("metrics/batched-per-worker: outcomes are counted in memory and written in one batch at stop", async () => {
    const raw = memoryBackend();
    const calls: number[] = [];
    const backend = overriding(raw, "metrics", {
      record: (rows) => {
        calls.push(rows.length);
        return raw.metrics.record(rows);
      },
    });
    const soniq = app({}, backend);
    soniq.job("m.ok", async () => 1, { queue: "m" });
    soniq.job(
      "m.bad",
      async () => {
        throw new Error("x");
      },
      { queue: "m", maxAttempts: 1 },
    );
    for (let i = 0; i < 20; i++) await soniq.jobs.enqueue("m.ok", {});
    await soniq.jobs.enqueue("m.bad", {});
    await soniq.worker({ concurrency: 5 }).runOnce();
    expect(calls).toEqual([2]);
    const series = await soniq.metrics.series({ since: new Date(Date.now() - 120_000), queue: "m" });
    const total = series.reduce(
      (acc, p) => ({ done: acc.done + p.done, deadLettered: acc.deadLettered + p.deadLettered }),
      { done: 0, deadLettered: 0 },
    );
    expect(total).toEqual({ done: 20, deadLettered: 1 });
    expect(await soniq.metrics.series({ queue: "elsewhere" })).toEqual([]);
    const err = await soniq.metrics.series({ bucketMs: 1000 }).catch((e: unknown) => e);
    expect(isSoniqError(err, "SONIQ_INVALID_ARGUMENT")).toBe(true);
  });

  it("metrics/counts-each-outcome-once: a failed attempt that retries is one failed and one retried; done and dead-lettered once each", async () => {
    const soniq = app();
    let runs = 0;
    soniq.job(
      "m.flaky",
      async () => {
        runs++;
        if (runs === 1) throw new Error("first attempt fails");
        return "ok";
      },
      { queue: "mc", retry: { delaysMs: [0] } },
    );
    soniq.job(
      "m.doomed",
      async () => {
        throw new Error("always");
      },
      { queue: "mc", maxAttempts: 1 },
    );
    await soniq.jobs.enqueue("m.flaky", {});
    await soniq.jobs.enqueue("m.doomed", {});
    expect(await soniq.worker({ concurrency: 1 }).runOnce()).toBe(3);
    const series = await soniq.metrics.series({ since: new Date(Date.now() - 120_000), queue: "mc" });
    const total = series.reduce(
      (acc, p) => ({
        done: acc.done + p.done,
        failed: acc.failed + p.failed,
        retried: acc.retried + p.retried,
        deadLettered: acc.deadLettered + p.deadLettered,
      }),
      { done: 0, failed: 0, retried: 0, deadLettered: 0 },
    );
    // The final failure is counted as the dead letter it became, not as a failed attempt that retries.
    expect(total).toEqual({ done: 1, failed: 1, retried: 1, deadLettered: 1 });
  });

  it("metrics/failed-flush-kept: counts of interleaved jobs survive a failed write and join the next one", async () => {
    const raw = memoryBackend();
    const written: { jobName: string; done: number; deadLettered: number }[][] = [];
    let fail = true;
    const backend = overriding(raw, "metrics", {
      record: async (rows) => {
        if (fail) {
          fail = false;
          throw new Error("metrics table unavailable");
        }
        written.push(rows.map((r) => ({ jobName: r.jobName, done: r.done, deadLettered: r.deadLettered })));
        return raw.metrics.record(rows);
      },
    });
    const soniq = app({}, backend);
    soniq.job("mk.a", async () => 1, { queue: "mk" });
    soniq.job("mk.b", async () => 2, { queue: "mk" });
    soniq.job(
      "mk.bad",
      async () => {
        throw new Error("x");
      },
      { queue: "mk", maxAttempts: 1 },
    );
    // Each run ends with the job the next one starts with: the counts after a flush go to a fresh row.
    const names = ["mk.a", "mk.b", "mk.a", "mk.bad", "mk.b", "mk.a"];
    for (const name of names) await soniq.jobs.enqueue(name, {});
    const worker = soniq.worker({ concurrency: 1 });
    expect(await worker.runOnce()).toBe(6);
    expect(written).toEqual([]);
    for (const name of names) await soniq.jobs.enqueue(name, {});
    expect(await worker.runOnce()).toBe(6);
    // Summed per job name: the two runs may fall in different minutes (then each name has two rows).
    const byName: Record<string, { done: number; deadLettered: number }> = {};
    for (const r of written[0] ?? []) {
      const sum = byName[r.jobName] ?? { done: 0, deadLettered: 0 };
      byName[r.jobName] = sum;
      sum.done += r.done;
      sum.deadLettered += r.deadLettered;
    }
    expect(written).toHaveLength(1);
    expect(byName).toEqual({
      "mk.a": { done: 6, deadLettered: 0 },
      "mk.b": { done: 4, deadLettered: 0 },
      "mk.bad": { done: 0, deadLettered: 2 },
    });
  });

  it("metrics/series-rebuckets: minute rows summed into wider buckets", async () => {
    const backend = memoryBackend();
    const soniq = app({}, backend);
    const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 3_600_000;
    const row = (at: number, done: number) => ({
      bucketStart: new Date(at),
      queue: "q",
      jobName: "j.x",
      done,
      failed: 0,
      retried: 0,
      deadLettered: 0,
      snoozed: 0,
      runMsSum: 10,
    });
    await backend.metrics.record([row(hour, 1), row(hour + 60_000, 2), row(hour + 3_600_000, 4)]);
    const series = await soniq.metrics.series({ since: new Date(hour), bucketMs: 3_600_000 });
    expect(series.map((p) => [p.bucketStart.getTime(), p.done, p.runMsSum])).toEqual([
      [hour, 3, 20],
      [hour + 3_600_000, 4, 10],
    ]);
  });
});
