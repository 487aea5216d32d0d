import type { QueueStats } from "@soniq/core";
import { defineCase } from "../define-case.js";
import { claimOne, deepEqual, enqueue, equal } from "./helpers.js";

const KEYS = ["cancelled", "dead_letter", "done", "processing", "queued", "total"];

function assertShape(stats: QueueStats, what: string): void {
  deepEqual(Object.keys(stats).sort(), KEYS, `${what} must have exactly the six keys ${KEYS.join(", ")}`);
  const sum = stats.queued + stats.processing + stats.done + stats.dead_letter + stats.cancelled;
  equal(stats.total, sum, `${what}: total (${stats.total}) must equal the sum of the five buckets (${sum})`);
}

export const statsCases = [
  defineCase({
    id: "stats/six-keys-zero-when-empty",
    title: "stats of an empty queue are exactly the six keys, all zero",
    async run(ctx) {
      const stats = await ctx.backend.getQueueStats({ queue: ctx.queue() });
      deepEqual(stats, { total: 0, queued: 0, processing: 0, done: 0, dead_letter: 0, cancelled: 0 });
      assertShape(stats, "getQueueStats({ queue })");
    },
  }),
  defineCase({
    id: "stats/total-is-sum-in-every-state-mix",
    title: "per-queue stats count each status and the dead-letter table; total is the sum after every step",
    async run(ctx) {
      const queue = ctx.queue();
      const expect = async (want: Omit<QueueStats, "total">, step: string) => {
        const stats = await ctx.backend.getQueueStats({ queue });
        assertShape(stats, `stats after ${step}`);
        const total = want.queued + want.processing + want.done + want.dead_letter + want.cancelled;
        deepEqual(stats, { total, ...want }, `stats after ${step}`);
        assertShape(await ctx.backend.getQueueStats(), `global stats after ${step}`);
      };
      const zero = { queued: 0, processing: 0, done: 0, dead_letter: 0, cancelled: 0 };
      await enqueue(ctx, { queue });
      const b = await enqueue(ctx, { queue });
      await expect({ ...zero, queued: 2 }, "2 enqueues");
      const running = await claimOne(ctx, queue);
      await expect({ ...zero, queued: 1, processing: 1 }, "a claim");
      await ctx.backend.complete([
        { id: running.id, attempt: running.attempts, result: null, resultTtlMs: 60_000 },
      ]);
      await expect({ ...zero, queued: 1, done: 1 }, "a completion");
      await ctx.backend.cancel(b.id);
      await expect({ ...zero, done: 1, cancelled: 1 }, "a cancel");
      await enqueue(ctx, { queue });
      const dying = await claimOne(ctx, queue);
      await ctx.backend.markJobDeadLetter(dying.id, {
        reason: "permanent_failure",
        error: null,
        attempt: dying.attempts,
      });
      await expect({ ...zero, done: 1, cancelled: 1, dead_letter: 1 }, "a dead-letter move");
    },
  }),
  defineCase({
    id: "stats/dead-letter-counts-across-tables",
    title: "dead_letter counts soniq_dead_letter_jobs rows (replay keeps the row; purge removes it)",
    async run(ctx) {
      const queue = ctx.queue();
      const job = await enqueue(ctx, { queue });
      await ctx.backend.markJobDeadLetter(job.id, { reason: "permanent_failure", error: null });
      const newId = ctx.id();
      await ctx.backend.replayDeadLetterJob(job.id, { newId });
      const stats = await ctx.backend.getQueueStats({ queue });
      equal(stats.dead_letter, 1, "a replayed dead-letter row stays and still counts");
      equal(stats.queued, 1, "the replayed job counts as queued");
      equal(stats.total, 2);
      await ctx.backend.purgeDeadLetterJob(job.id);
      equal((await ctx.backend.getQueueStats({ queue })).dead_letter, 0, "a purged row no longer counts");
    },
  }),
];
