/**
 * `markJobsDeadLetter`, the optional batched worker-side move. These cases apply only to backends that
 * implement it; core falls back to one `markJobDeadLetter` per job otherwise.
 */
import assert from "node:assert/strict";
import type { Backend, DeadLetterItem } from "@soniq/core";
import { defineCase } from "../define-case.js";
import type { CaseContext } from "../types.js";
import { deepEqual, enqueue, equal, processingJob } from "./helpers.js";

/** The batch method; the cases declare `requires.methods`, so it is present. */
function moveMany(ctx: CaseContext): NonNullable<Backend<unknown>["markJobsDeadLetter"]> {
  const fn = ctx.backend.markJobsDeadLetter;
  assert.ok(typeof fn === "function", "the backend must implement markJobsDeadLetter");
  return fn.bind(ctx.backend);
}

function sorted(values: readonly string[]): string[] {
  return [...values].sort();
}

async function claimAll(ctx: CaseContext, queue: string, n: number) {
  const claimed = await ctx.backend.claim({ queues: [queue], limit: n, workerId: null });
  equal(claimed.length, n, `claiming ${n} due jobs from a fresh queue should return ${n}`);
  return claimed;
}

export const deadLetterBatchCases = [
  defineCase({
    id: "dlq/batch-move-moves-fenced-items",
    title:
      "markJobsDeadLetter moves every fenced item with its own reason, error and tags, and returns their ids",
    requires: { methods: ["markJobsDeadLetter"] },
    async run(ctx) {
      const queue = ctx.queue();
      for (let i = 0; i < 3; i++) await enqueue(ctx, { queue, args: { i } });
      const jobs = await claimAll(ctx, queue, 3);
      const items: DeadLetterItem[] = jobs.map((j, i) => ({
        id: j.id,
        attempt: j.attempts,
        reason: i === 0 ? "max_retries_exceeded" : "permanent_failure",
        error: i === 2 ? null : `Error ${i}`,
        tags: i === 1 ? { i } : undefined,
      }));
      const moved = await moveMany(ctx)(items);
      deepEqual(sorted(moved), sorted(jobs.map((j) => j.id)), "every fenced item must be reported moved");
      for (const [i, job] of jobs.entries()) {
        equal(await ctx.backend.getJob(job.id), null, `job ${i} must be gone from soniq_jobs`);
        const dead = await ctx.backend.getDeadLetterJob(job.id);
        assert.ok(dead !== null, `job ${i} must have a dead-letter row`);
        deepEqual(dead.args, job.args, "args copied");
        equal(dead.attempts, job.attempts, "attempts as at the move");
        equal(dead.deadLetterReason, items[i]?.reason, "the item's own reason");
        equal(dead.lastError, items[i]?.error, "the item's own error (null stays null)");
        deepEqual(dead.tags, i === 1 ? { i } : null, "the item's own tags (default null)");
      }
      const stats = await ctx.backend.getQueueStats({ queue });
      equal(stats.processing, 0, "no job left processing");
      equal(stats.dead_letter, 3, "three dead-letter rows");
      equal(stats.total, 3, "total counts each job once");
      deepEqual(await moveMany(ctx)([]), [], "an empty batch moves nothing");
    },
  }),
  defineCase({
    id: "dlq/batch-move-skips-unfenced-items",
    title:
      "items not processing under their attempt (late, re-claimed, queued, cancelled, unknown) are skipped; the rest move",
    requires: { methods: ["markJobsDeadLetter"] },
    async run(ctx) {
      const good = await processingJob(ctx);
      const stale = await processingJob(ctx);
      const nacked = await processingJob(ctx);
      await ctx.backend.nack({ id: nacked.id, attempt: nacked.attempts });
      const cancelled = await processingJob(ctx);
      await ctx.backend.cancel(cancelled.id);
      const item = (id: string, attempt: number): DeadLetterItem => ({
        id,
        attempt,
        reason: "permanent_failure",
        error: "late",
      });
      const moved = await moveMany(ctx)([
        item(stale.id, stale.attempts + 1),
        item(good.id, good.attempts),
        item(nacked.id, nacked.attempts),
        item(cancelled.id, cancelled.attempts),
        item(ctx.id(), 1),
        item("not-a-uuid", 1),
      ]);
      deepEqual(moved, [good.id], "only the fenced item moves");
      equal(await ctx.backend.getJob(good.id), null);
      const expected: [string, string][] = [
        [stale.id, "processing"],
        [nacked.id, "queued"],
        [cancelled.id, "cancelled"],
      ];
      for (const [id, status] of expected) {
        equal((await ctx.backend.getJob(id))?.status, status, `a skipped item's job stays ${status}`);
        equal(await ctx.backend.getDeadLetterJob(id), null, "a skipped item gets no dead-letter row");
      }
    },
  }),
  defineCase({
    id: "dlq/batch-move-skips-conflicting-items",
    title: "an item whose id already has a dead-letter row is skipped and left processing; the others move",
    requires: { methods: ["markJobsDeadLetter"] },
    async run(ctx) {
      const queue = ctx.queue();
      const first = await enqueue(ctx, { queue, args: { v: "first" } });
      await ctx.backend.markJobDeadLetter(first.id, { reason: "permanent_failure", error: "first" });
      // A new job with the same id (the tables are separate, so this insert is legal).
      await enqueue(ctx, { id: first.id, queue, args: { v: "second" } });
      await enqueue(ctx, { queue, args: { v: "other" } });
      const jobs = await claimAll(ctx, queue, 2);
      const other = jobs.find((j) => j.id !== first.id);
      const again = jobs.find((j) => j.id === first.id);
      assert.ok(other !== undefined && again !== undefined);
      const moved = await moveMany(ctx)(
        jobs.map((j) => ({ id: j.id, attempt: j.attempts, reason: "max_retries_exceeded", error: "second" })),
      );
      deepEqual(moved, [other.id], "only the item without a dead-letter row moves");
      const job = await ctx.backend.getJob(first.id);
      equal(job?.status, "processing", "the conflicting job stays in soniq_jobs, processing");
      deepEqual(job?.args, { v: "second" });
      const dead = await ctx.backend.getDeadLetterJob(first.id);
      equal(dead?.lastError, "first", "the existing dead-letter row is unchanged");
      const stats = await ctx.backend.getQueueStats({ queue });
      equal(stats.processing, 1);
      equal(stats.dead_letter, 2);
    },
  }),
  defineCase({
    id: "dlq/batch-move-concurrent-batches-move-each-once",
    title:
      "overlapping concurrent batches move each job once; the returned ids are disjoint and cover every job",
    requires: { methods: ["markJobsDeadLetter"] },
    async run(ctx) {
      const queue = ctx.queue();
      await Promise.all(Array.from({ length: 12 }, (_, i) => enqueue(ctx, { queue, args: { i } })));
      const jobs = await claimAll(ctx, queue, 12);
      const items = jobs.map((j) => ({
        id: j.id,
        attempt: j.attempts,
        reason: "permanent_failure",
        error: "x",
      }));
      const results = await Promise.all([
        moveMany(ctx)(items.slice(0, 8)),
        moveMany(ctx)(items.slice(4)),
        moveMany(ctx)([...items].reverse()),
      ]);
      const all = results.flat();
      equal(new Set(all).size, all.length, "no job may be reported moved twice");
      deepEqual(sorted(all), sorted(jobs.map((j) => j.id)), "every job is reported moved once");
      const stats = await ctx.backend.getQueueStats({ queue });
      equal(stats.dead_letter, 12);
      equal(stats.processing, 0);
      equal(stats.total, 12, "each job counted in exactly one table");
    },
  }),
  defineCase({
    id: "dlq/batch-move-fault-leaves-all-intact",
    title: "a fault during a batched move rejects the call and leaves every item's pre-move state",
    requires: {
      methods: ["markJobsDeadLetter"],
      deadLetterFault: true,
      inspector: ["readJob", "readDeadLetterJob"],
    },
    async run(ctx) {
      const queue = ctx.queue();
      await enqueue(ctx, { queue });
      await enqueue(ctx, { queue });
      const jobs = await claimAll(ctx, queue, 2);
      const items = jobs.map((j) => ({
        id: j.id,
        attempt: j.attempts,
        reason: "permanent_failure",
        error: "x",
      }));
      await ctx.harness.injectDeadLetterFault?.();
      let failed = false;
      try {
        await moveMany(ctx)(items);
      } catch {
        failed = true;
      }
      assert.ok(failed, "markJobsDeadLetter must reject when the injected fault fires");
      for (const job of jobs) {
        const raw = await ctx.inspector.readJob(job.id);
        equal(raw?.status, "processing", "every job must still be in soniq_jobs, processing");
        equal(await ctx.inspector.readDeadLetterJob(job.id), null, "there must be no dead-letter row");
      }
      deepEqual(sorted(await moveMany(ctx)(items)), sorted(jobs.map((j) => j.id)), "the retry moves both");
      for (const job of jobs) equal(await ctx.inspector.readJob(job.id), null);
    },
  }),
];
