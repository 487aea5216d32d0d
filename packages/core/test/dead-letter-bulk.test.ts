/** deadLetters.replayWhere / purgeWhere on the memory backend: chunked, dry run, one audit row each. */
import { randomUUID } from "node:crypto";
import { describe, expect, it, vi } from "vitest";
import { isSoniqError } from "../src/common/errors.js";
import type { DeadLetterListQuery, NewJob } from "../src/contract/index.js";
import { deadLetterAllDue, memoryApps, memoryBackend, overriding } from "./memory.js";

const app = memoryApps();

const newJob = (queue: string): NewJob => ({
  id: randomUUID(),
  jobName: "bulk.job",
  args: {},
  argsHash: null,
  queue,
  priority: 100,
  maxAttempts: 3,
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

/** `n` dead letters in `queue`, straight through the backend. */
async function deadLetters(backend: ReturnType<typeof memoryBackend>, queue: string, n: number) {
  await backend.jobs.enqueueMany(
    Array.from({ length: n }, () => newJob(queue)),
    {},
  );
  await deadLetterAllDue(backend, [queue]);
}

describe("dead-letter/bulk", () => {
  it("dead-letter/bulk-includes-this-millisecond: a dead letter made in the call's own millisecond is acted on", async () => {
    vi.useFakeTimers({ toFake: ["Date"], now: new Date("2026-12-01T12:00:00.000Z") });
    try {
      const raw = memoryBackend();
      const soniq = app({ allowUnknownJobNames: true }, raw);
      await deadLetters(raw, "now", 3);
      expect(await soniq.deadLetters.purgeWhere({ queue: "now" }, { dryRun: true })).toEqual({
        count: 3,
        dryRun: true,
      });
      expect(await soniq.deadLetters.purgeWhere({ queue: "now" })).toEqual({ count: 3, dryRun: false });
    } finally {
      vi.useRealTimers();
    }
  });

  it("dead-letter/bulk-chunked-and-audited: dry run counts, purgeWhere and replayWhere act on every match in pages", async () => {
    const raw = memoryBackend();
    const pages: number[] = [];
    const spied = overriding(raw, "deadLetters", {
      list: (q: DeadLetterListQuery) => {
        pages.push(q.limit);
        return raw.deadLetters.list(q);
      },
    });
    const soniq = app({ allowUnknownJobNames: true }, spied);
    await deadLetters(raw, "big", 1203);
    await deadLetters(raw, "small", 5);

    expect(await soniq.deadLetters.purgeWhere({ queue: "big" }, { dryRun: true, actor: "ops" })).toEqual({
      count: 1203,
      dryRun: true,
    });
    expect(await soniq.jobs.stats({ queue: "big" })).toMatchObject({ dead_letter: 1203 });
    expect(await soniq.deadLetters.purgeWhere({ queue: "big" }, { actor: "ops" })).toEqual({
      count: 1203,
      dryRun: false,
    });
    expect(await soniq.jobs.stats({ queue: "big" })).toMatchObject({ dead_letter: 0 });
    expect(await soniq.jobs.stats({ queue: "small" })).toMatchObject({ dead_letter: 5 });
    expect(Math.max(...pages)).toBeLessThanOrEqual(500);

    expect(await soniq.deadLetters.replayWhere({ queue: "small" }, { priority: 1 })).toEqual({
      count: 5,
      dryRun: false,
    });
    const replayed = await soniq.jobs.list({ queue: "small", status: "queued" });
    expect(replayed.map((j) => j.priority)).toEqual([1, 1, 1, 1, 1]);

    const rows = await soniq.audit.list();
    expect(rows.map((r) => [r.action, r.actor, r.outcome, r.details])).toEqual([
      ["dead_letter.replay_where", "api", "ok", { count: 5 }],
      ["dead_letter.purge_where", "ops", "ok", { count: 1203 }],
      ["dead_letter.purge_where", "ops", "dry_run", { count: 1203 }],
    ]);
    expect(rows[0]?.params).toMatchObject({ queue: "small", dryRun: false });
  });

  it("dead-letter/bulk-bad-input: paging keys, bad filters and options are rejected, nothing written", async () => {
    const soniq = app();
    for (const call of [
      () => soniq.deadLetters.purgeWhere({ limit: 5 } as never),
      () => soniq.deadLetters.purgeWhere({ queue: "" }),
      () => soniq.deadLetters.replayWhere({}, { dryRun: "yes" as never }),
      () => soniq.deadLetters.replayWhere({}, { priority: 1.5 }),
    ]) {
      const err = await call().catch((e: unknown) => e);
      expect(isSoniqError(err, "SONIQ_INVALID_ARGUMENT") || isSoniqError(err, "SONIQ_INVALID_OPTIONS")).toBe(
        true,
      );
    }
    expect(await soniq.audit.list()).toEqual([]);
  });

  it("dead-letter/bulk-progress: onProgress(done, total) from 0 to the count, not on a dry run, its throws ignored, a non-function refused", async () => {
    const raw = memoryBackend();
    const soniq = app({ allowUnknownJobNames: true }, raw);
    await deadLetters(raw, "big", 1203);
    await deadLetters(raw, "small", 3);

    const calls: [number, number][] = [];
    const onProgress = (done: number, total: number) => {
      calls.push([done, total]);
    };
    expect(await soniq.deadLetters.purgeWhere({ queue: "big" }, { dryRun: true, onProgress })).toEqual({
      count: 1203,
      dryRun: true,
    });
    expect(calls).toEqual([]);
    expect(await soniq.deadLetters.purgeWhere({ queue: "big" }, { onProgress })).toEqual({
      count: 1203,
      dryRun: false,
    });
    expect(calls).toEqual(Array.from({ length: 1204 }, (_, done) => [done, 1203]));

    calls.length = 0;
    expect(await soniq.deadLetters.replayWhere({ queue: "small" }, { onProgress, priority: 1 })).toEqual({
      count: 3,
      dryRun: false,
    });
    expect(calls).toEqual([
      [0, 3],
      [1, 3],
      [2, 3],
      [3, 3],
    ]);

    const throwing = () => {
      throw new Error("the display broke");
    };
    const rejecting = () => Promise.reject(new Error("async display broke"));
    expect(await soniq.deadLetters.replayWhere({ queue: "small" }, { onProgress: throwing })).toEqual({
      count: 3,
      dryRun: false,
    });
    expect(await soniq.deadLetters.purgeWhere({ queue: "small" }, { onProgress: rejecting })).toEqual({
      count: 3,
      dryRun: false,
    });
    expect(await soniq.jobs.stats({ queue: "small" })).toMatchObject({ dead_letter: 0, queued: 6 });

    const before = await soniq.audit.list();
    await deadLetters(raw, "kept", 2);
    for (const call of [
      () => soniq.deadLetters.purgeWhere({ queue: "kept" }, { onProgress: "yes" as never }),
      () => soniq.deadLetters.replayWhere({ queue: "kept" }, { onProgress: 1 as never }),
      () => soniq.deadLetters.purgeWhere({ queue: "kept" }, { dryRun: true, onProgress: {} as never }),
    ]) {
      const err = await call().catch((e: unknown) => e);
      expect(isSoniqError(err, "SONIQ_INVALID_OPTIONS"), String(err)).toBe(true);
    }
    expect(await soniq.jobs.stats({ queue: "kept" })).toMatchObject({ dead_letter: 2, queued: 0 });
    expect(await soniq.audit.list()).toEqual(before);
    expect(before.slice(0, 3).map((r) => [r.action, r.details])).toEqual([
      ["dead_letter.purge_where", { count: 3 }],
      ["dead_letter.replay_where", { count: 3 }],
      ["dead_letter.replay_where", { count: 3 }],
    ]);
  });
});
