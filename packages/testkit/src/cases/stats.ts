import type { QueueStats } from "@soniq/core/backend";
import { defineCase } from "../define-case.js";
import type { CaseContext } from "../types.js";
import {
  cancelForSetup,
  claimOne,
  deadLetter,
  deadLettered,
  deepEqual,
  done,
  enqueue,
  equal,
  settleOne,
  stats,
} from "./helpers.js";

const KEYS = ["cancelled", "dead_letter", "done", "processing", "queued", "total"];

function assertShape(s: QueueStats, what: string): void {
  deepEqual(Object.keys(s).sort(), KEYS, `${what} must have exactly the six keys ${KEYS.join(", ")}`);
  const sum = s.queued + s.processing + s.done + s.dead_letter + s.cancelled;
  equal(s.total, sum, `${what}: total (${s.total}) must equal the sum of the five buckets (${sum})`);
}

/** One job in every state (queued, processing, done, cancelled, dead letter) in `queue`. */
async function oneOfEach(ctx: CaseContext, queue: string): Promise<void> {
  await enqueue(ctx, { queue });
  await enqueue(ctx, { queue, priority: 1 });
  await enqueue(ctx, { queue, priority: 2 });
  await settleOne(ctx, done(await claimOne(ctx, queue)), "completing a job");
  await claimOne(ctx, queue);
  const cancelled = await enqueue(ctx, { queue });
  await cancelForSetup(ctx, cancelled.id, "a queued job");
  // Priority 0, so it is the one claimed and moved while the first job stays queued.
  await deadLettered(ctx, { queue, priority: 0 });
}

export const statsCases = [
  defineCase({
    id: "stats/six-keys-zero-when-empty",
    title: "stats of an empty queue are exactly the six keys, all zero, while other queues hold jobs",
    async run(ctx) {
      await oneOfEach(ctx, ctx.queue("busy"));
      const s = await stats(ctx, ctx.queue());
      deepEqual(
        s,
        { total: 0, queued: 0, processing: 0, done: 0, dead_letter: 0, cancelled: 0 },
        "jobs.stats({ queue }) of a queue without jobs must be all zero, whatever other queues hold",
      );
      assertShape(s, "jobs.stats({ queue })");
    },
  }),
  defineCase({
    id: "stats/total-is-sum-in-every-state-mix",
    title:
      "per-queue stats count each status and the dead-letter table of that queue only; total is the sum after every step",
    async run(ctx) {
      const queue = ctx.queue();
      // Another queue holding a job in every state: a stats call that ignores its queue filter counts them.
      await oneOfEach(ctx, ctx.queue("other"));
      const expect = async (want: Omit<QueueStats, "total">, step: string) => {
        const s = await stats(ctx, queue);
        assertShape(s, `stats after ${step}`);
        const total = want.queued + want.processing + want.done + want.dead_letter + want.cancelled;
        deepEqual(
          s,
          { total, ...want },
          `jobs.stats({ queue }) after ${step} must count that queue's jobs only`,
        );
        assertShape(await stats(ctx), `global stats after ${step}`);
      };
      const zero = { queued: 0, processing: 0, done: 0, dead_letter: 0, cancelled: 0 };
      await enqueue(ctx, { queue });
      const b = await enqueue(ctx, { queue });
      await expect({ ...zero, queued: 2 }, "2 enqueues");
      const running = await claimOne(ctx, queue);
      await expect({ ...zero, queued: 1, processing: 1 }, "a claim");
      await settleOne(ctx, done(running), "completing a job");
      await expect({ ...zero, queued: 1, done: 1 }, "a completion");
      await cancelForSetup(ctx, b.id, "the queued job");
      await expect({ ...zero, done: 1, cancelled: 1 }, "a cancel");
      await enqueue(ctx, { queue });
      const dying = await claimOne(ctx, queue);
      await settleOne(ctx, deadLetter(dying), "moving a job to the dead-letter table");
      await expect({ ...zero, done: 1, cancelled: 1, dead_letter: 1 }, "a dead-letter move");
      const global = await stats(ctx);
      equal(
        global.done >= 2 && global.dead_letter >= 2,
        true,
        "jobs.stats({ queue: null }) must count every queue",
      );
    },
  }),
  defineCase({
    id: "stats/dead-letter-counts-across-tables",
    title: "dead_letter counts soniq_dead_letter_jobs rows (replay keeps the row; purge removes it)",
    async run(ctx) {
      const queue = ctx.queue();
      const job = await deadLettered(ctx, { queue });
      const newId = ctx.id();
      await ctx.backend.deadLetters.replay(job.id, {
        newId,
        queue: null,
        priority: null,
        scheduledAt: null,
        traceId: null,
        traceContext: null,
      });
      const s = await stats(ctx, queue);
      equal(s.dead_letter, 1, "a replayed dead-letter row stays and still counts");
      equal(s.queued, 1, "the replayed job counts as queued");
      equal(s.total, 2, "total counts the row and the replayed job");
      await ctx.backend.deadLetters.purge(job.id);
      equal((await stats(ctx, queue)).dead_letter, 0, "a purged row no longer counts");
    },
  }),
];
