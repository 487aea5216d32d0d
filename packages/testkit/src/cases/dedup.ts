import { defineCase } from "../define-case.js";
import { cancelForSetup, claimOne, deepEqual, equal, listJobs, notEqual, requeue } from "./helpers.js";

export const dedupCases = [
  defineCase({
    id: "dedup/dedup-key-returns-queued-job",
    title: "enqueueing a dedup_key held by a queued job returns that job's id with deduplicated: true",
    async run(ctx) {
      const queue = ctx.queue();
      const dedupKey = `key-${ctx.id()}`;
      const first = await ctx.backend.jobs.enqueue(ctx.newJob({ queue, dedupKey }), {});
      const second = await ctx.backend.jobs.enqueue(
        ctx.newJob({ queue, dedupKey, args: { other: true } }),
        {},
      );
      deepEqual(
        second,
        { id: first.id, deduplicated: true },
        "the duplicate must return the queued job's id",
      );
      equal((await ctx.backend.jobs.stats({ queue })).queued, 1, "only one row may exist");
    },
  }),
  defineCase({
    id: "dedup/unique-args-return-queued-job",
    title:
      "a unique job with the same name and args hash as a queued one returns the existing id; other args do not",
    async run(ctx) {
      const queue = ctx.queue();
      const argsHash = `hash-${ctx.id()}`;
      const first = await ctx.backend.jobs.enqueue(ctx.newJob({ queue, unique: true, argsHash }), {});
      const dup = await ctx.backend.jobs.enqueue(ctx.newJob({ queue, unique: true, argsHash }), {});
      deepEqual(dup, { id: first.id, deduplicated: true }, "an equal unique job must return the existing id");
      const other = await ctx.backend.jobs.enqueue(
        ctx.newJob({ queue, unique: true, argsHash: `${argsHash}-2` }),
        {},
      );
      equal(other.deduplicated, false, "a unique job with different args must be inserted");
      const plain = await ctx.backend.jobs.enqueue(ctx.newJob({ queue, unique: false, argsHash }), {});
      equal(plain.deduplicated, false, "a non-unique job is never deduplicated by args");
      equal((await ctx.backend.jobs.stats({ queue })).queued, 3, "three distinct jobs must be queued");
    },
  }),
  defineCase({
    id: "dedup/new-job-once-no-longer-queued",
    title:
      "once the holder is processing, done or cancelled, the same dedup_key or unique args enqueue a new job",
    async run(ctx) {
      const queue = ctx.queue();
      const dedupKey = `key-${ctx.id()}`;
      const argsHash = `hash-${ctx.id()}`;
      const a = await ctx.backend.jobs.enqueue(ctx.newJob({ queue, dedupKey, unique: true, argsHash }), {});
      await claimOne(ctx, queue);
      const b = await ctx.backend.jobs.enqueue(ctx.newJob({ queue, dedupKey }), {});
      equal(b.deduplicated, false, "a processing holder must not block its dedup_key");
      notEqual(b.id, a.id, "the new job must get its own id");
      const c = await ctx.backend.jobs.enqueue(ctx.newJob({ queue, unique: true, argsHash }), {});
      equal(c.deduplicated, false, "a processing holder must not block its unique args");
      await cancelForSetup(ctx, b.id, "the queued holder");
      const d = await ctx.backend.jobs.enqueue(ctx.newJob({ queue, dedupKey }), {});
      equal(d.deduplicated, false, "a cancelled holder must not block its dedup_key");
      const e = await ctx.backend.jobs.enqueue(ctx.newJob({ queue, dedupKey }), {});
      deepEqual(e, { id: d.id, deduplicated: true }, "the new queued holder deduplicates again");
    },
  }),
  defineCase({
    id: "dedup/requeue-never-blocked-by-key",
    title:
      "a requeue (retry, nack) of a job whose dedup_key or unique args another queued job now holds applies; it gives them up",
    async run(ctx) {
      const queue = ctx.queue();
      const dedupKey = `key-${ctx.id()}`;
      const argsHash = `hash-${ctx.id()}`;
      const a = await ctx.backend.jobs.enqueue(ctx.newJob({ queue, dedupKey }), {});
      const b = await ctx.backend.jobs.enqueue(ctx.newJob({ queue, unique: true, argsHash }), {});
      const claimed = (await ctx.backend.runs.claim({ queues: [queue], limit: 2, workerId: null })).jobs;
      equal(claimed.length, 2, "both holders must be claimed");
      // While they run, equal jobs are enqueued and now hold the key and the args.
      await ctx.backend.jobs.enqueue(ctx.newJob({ queue, dedupKey }), {});
      await ctx.backend.jobs.enqueue(ctx.newJob({ queue, unique: true, argsHash }), {});
      deepEqual(
        await ctx.backend.runs.settle([
          requeue({ id: a.id, attempts: 1 }, { cause: "retry", lastError: "e" }),
          requeue({ id: b.id, attempts: 1 }, { cause: "nack" }),
        ]),
        [true, true],
        "a requeue must apply to a job whose dedup_key or unique args another queued job now holds",
      );
      equal((await ctx.backend.jobs.stats({ queue })).queued, 4, "all four jobs must be queued");
      // The returning job gives up the key to the job that holds it now (SQL: the partial unique index allows one).
      equal(
        (await ctx.backend.jobs.get(a.id))?.dedupKey,
        null,
        "the requeued job must give up its dedup_key to the queued holder",
      );
      equal(
        (await ctx.backend.jobs.get(b.id))?.uniqueJob,
        false,
        "the requeued job must give up its unique flag to the queued holder",
      );
      const again = await ctx.backend.jobs.enqueue(ctx.newJob({ queue, dedupKey }), {});
      equal(again.deduplicated, true, "the key's holder must still deduplicate");
      const all = (await ctx.backend.runs.claim({ queues: [queue], limit: 10, workerId: null })).jobs;
      equal(all.length, 4, "all four jobs must be claimable");
    },
  }),
  defineCase({
    id: "dedup/concurrent-duplicates-make-one-row",
    title: "10 concurrent enqueues with one dedup_key (and 10 with equal unique args) leave one row each",
    async run(ctx) {
      const queue = ctx.queue();
      const dedupKey = `key-${ctx.id()}`;
      const argsHash = `hash-${ctx.id()}`;
      const byKey = await Promise.all(
        Array.from({ length: 10 }, () => ctx.backend.jobs.enqueue(ctx.newJob({ queue, dedupKey }), {})),
      );
      const byArgs = await Promise.all(
        Array.from({ length: 10 }, () =>
          ctx.backend.jobs.enqueue(ctx.newJob({ queue, unique: true, argsHash }), {}),
        ),
      );
      for (const [what, results] of [
        ["dedup_key", byKey],
        ["unique args", byArgs],
      ] as const) {
        equal(
          new Set(results.map((r) => r.id)).size,
          1,
          `all concurrent ${what} enqueues must return one id`,
        );
        equal(results.filter((r) => !r.deduplicated).length, 1, `exactly one ${what} enqueue must insert`);
      }
      equal((await listJobs(ctx, { queue })).length, 2, "two rows in total must exist");
    },
  }),
];
