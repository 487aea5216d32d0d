/**
 * `runs.settle`: the worker's one write for every outcome (done, requeue, dead_letter), any mix per call,
 * each item fenced by (id, attempt), one boolean per item in input order.
 */
import assert from "node:assert/strict";
import { defineCase } from "../define-case.js";
import {
  cancelForSetup,
  claimAll,
  claimOne,
  deadLetter,
  deepEqual,
  done,
  enqueue,
  equal,
  near,
  processingJob,
  registerWorker,
  requeue,
  settleOne,
  sorted,
  stats,
  statusOf,
} from "./helpers.js";

export const settleCases = [
  defineCase({
    id: "settle/done-stores-result-and-expiry",
    title: "a done item marks the job done, stores the result and sets expires_at = now + resultTtlMs",
    async run(ctx) {
      const job = await processingJob(ctx);
      const result = { ok: true, items: [1, "two", null] };
      await settleOne(ctx, done(job, result, 3_600_000), "a done item for a processing job");
      const row = await ctx.backend.jobs.get(job.id);
      equal(row?.status, "done", "the job must be done");
      deepEqual(row?.result, result, "the result must be stored as given");
      near(row?.expiresAt ?? undefined, Date.now() + 3_600_000, 60_000, "expiresAt for a 1 h TTL");
    },
  }),
  defineCase({
    id: "settle/done-ttl-zero-deletes",
    title: "a done item with resultTtlMs 0 deletes the row",
    async run(ctx) {
      const job = await processingJob(ctx);
      await settleOne(ctx, done(job, 1, 0), "a done item with TTL 0");
      equal(await ctx.backend.jobs.get(job.id), null, "a job settled done with TTL 0 must be gone");
      equal((await stats(ctx, job.queue)).total, 0, "a deleted job must not count in stats");
    },
  }),
  defineCase({
    id: "settle/requeue-writes-what-core-sent",
    title:
      "a requeue item writes exactly the attempts and last_error given (null keeps it), clears worker_id, and is due after delayMs",
    async run(ctx) {
      const queue = ctx.queue();
      const workerId = await registerWorker(ctx, queue);
      const job = await enqueue(ctx, { queue, maxAttempts: 10 });
      const first = await claimOne(ctx, queue, workerId);
      equal(first.workerId, workerId, "the claim must stamp the worker id");
      await settleOne(
        ctx,
        requeue(first, { cause: "retry", attempts: 1, lastError: "Error: boom", delayMs: 600_000 }),
        "a retry with a 10 min delay",
      );
      const row = await ctx.backend.jobs.get(job.id);
      equal(row?.status, "queued", "a requeued job must be queued");
      equal(row?.attempts, 1, "attempts must be the value the item carries");
      equal(row?.lastError, "Error: boom", "last_error must be the string the item carries");
      equal(row?.workerId, null, "a requeue must clear worker_id");
      near(row?.scheduledAt, Date.now() + 600_000, 60_000, "scheduledAt = now + delayMs");
      deepEqual(
        (await ctx.backend.runs.claim({ queues: [queue], limit: 1, workerId: null })).jobs,
        [],
        "a requeued job must not be claimable before its delay passes",
      );
      // A second job, requeued with lastError null (a nack or snooze keeps the error) and attempts core chose.
      const other = await enqueue(ctx, { queue: ctx.queue("other"), maxAttempts: 10 });
      const run1 = await claimOne(ctx, other.queue, workerId);
      await settleOne(ctx, requeue(run1, { attempts: 1, lastError: "first failure" }), "a retry due now");
      const run2 = await claimOne(ctx, other.queue, workerId);
      equal(run2.attempts, 2, "the second claim must return attempts 2");
      await settleOne(ctx, requeue(run2, { cause: "snooze", attempts: 7, lastError: null }), "a snooze");
      const kept = await ctx.backend.jobs.get(other.id);
      equal(kept?.attempts, 7, "attempts must be written as given, not computed by the backend");
      equal(kept?.lastError, "first failure", "lastError null must leave last_error unchanged");
      equal(kept?.workerId, null, "every requeue must clear worker_id");
      const again = await claimOne(ctx, other.queue);
      equal(again.id, other.id, "a job requeued with delayMs 0 must be due at once");
      equal(again.attempts, 8, "the next claim counts on from the written attempts");
    },
  }),
  defineCase({
    id: "settle/mixed-batch-results-in-input-order",
    title:
      "one settle call applies any mix of done, requeue and dead_letter items and returns one boolean per item in input order",
    async run(ctx) {
      const queue = ctx.queue();
      for (let i = 0; i < 4; i++) await enqueue(ctx, { queue, args: { i } });
      const [a, b, c, d] = await claimAll(ctx, queue, 4);
      assert.ok(a && b && c && d, "four jobs must be claimed");
      const results = await ctx.backend.runs.settle([
        requeue(b, { lastError: "retry b" }),
        done(c, "c"),
        { ...done(d), attempt: d.attempts + 1 },
        deadLetter(a, { error: "dead a" }),
        done({ id: ctx.id(), attempts: 1 }),
      ]);
      deepEqual(
        results,
        [true, true, false, true, false],
        "results must follow input order: requeue, done, done with a wrong attempt, dead_letter, unknown id",
      );
      equal(await statusOf(ctx, b.id), "queued", "the requeued item's job must be queued");
      equal((await ctx.backend.jobs.get(c.id))?.result, "c", "the done item's job must hold its result");
      equal(await statusOf(ctx, d.id), "processing", "the item with a wrong attempt must change nothing");
      equal(
        await ctx.backend.jobs.get(a.id),
        null,
        "the dead_letter item's job must be gone from soniq_jobs",
      );
      equal((await ctx.backend.deadLetters.get(a.id))?.lastError, "dead a", "the dead-letter row must exist");
      deepEqual(
        await stats(ctx, queue),
        { total: 4, queued: 1, processing: 1, done: 1, dead_letter: 1, cancelled: 0 },
        "stats after the mixed settle",
      );
      deepEqual(await ctx.backend.runs.settle([]), [], "an empty settle returns []");
    },
  }),
  defineCase({
    id: "settle/same-job-twice-applies-once",
    title: "two items for the same run in one call: the first applies, the second reports false",
    async run(ctx) {
      const job = await processingJob(ctx);
      deepEqual(
        await ctx.backend.runs.settle([done(job, "first"), deadLetter(job)]),
        [true, false],
        "only the first item for a run may apply",
      );
      equal((await ctx.backend.jobs.get(job.id))?.result, "first", "the first item's outcome must stand");
      equal(await ctx.backend.deadLetters.get(job.id), null, "the second item must not move the job");
    },
  }),
  defineCase({
    id: "fencing/late-writes-are-no-ops",
    title:
      "items carrying an old attempt, or for a job not processing (queued, cancelled, done), report false and change nothing",
    async run(ctx) {
      const queue = ctx.queue();
      const job = await enqueue(ctx, { queue, maxAttempts: 5 });
      const first = await claimOne(ctx, queue);
      await settleOne(ctx, requeue(first, { cause: "nack" }), "giving the job back");
      const second = await claimOne(ctx, queue);
      const stale = { id: job.id, attempts: first.attempts };
      deepEqual(
        await ctx.backend.runs.settle([
          done(stale, "late"),
          requeue(stale, { lastError: "late" }),
          deadLetter(stale, { error: "late" }),
        ]),
        [false, false, false],
        "items with attempt 1 after a re-claim (attempt 2) must not apply",
      );
      const row = await ctx.backend.jobs.get(job.id);
      equal(row?.status, "processing", "the current run's row must be untouched");
      equal(row?.attempts, second.attempts, "the current run's attempts must be untouched");
      equal(row?.lastError, null, "no late write may set last_error");
      equal(await ctx.backend.deadLetters.get(job.id), null, "no late write may move the job");

      const queued = await enqueue(ctx, { queue: ctx.queue("queued") });
      const cancelled = await processingJob(ctx);
      await cancelForSetup(ctx, cancelled.id, "a processing job");
      const finished = await processingJob(ctx);
      await settleOne(ctx, done(finished, "kept"), "completing a job");
      for (const [what, ref, status] of [
        ["queued", { id: queued.id, attempts: 0 }, "queued"],
        ["cancelled", cancelled, "cancelled"],
        ["done", finished, "done"],
      ] as const) {
        deepEqual(
          await ctx.backend.runs.settle([done(ref, "late"), requeue(ref), deadLetter(ref)]),
          [false, false, false],
          `items for a ${what} job must not apply`,
        );
        equal(await statusOf(ctx, ref.id), status, `a ${what} job must stay ${status}`);
        equal(await ctx.backend.deadLetters.get(ref.id), null, `a ${what} job must not be moved`);
      }
      equal((await ctx.backend.jobs.get(finished.id))?.result, "kept", "a done job's result must be kept");
    },
  }),
  defineCase({
    id: "settle/concurrent-settles-apply-each-once",
    title:
      "overlapping concurrent settle calls apply each run once; the applied items are disjoint and cover every job",
    async run(ctx) {
      const queue = ctx.queue();
      await ctx.backend.jobs.enqueueMany(
        Array.from({ length: 12 }, (_, i) => ctx.newJob({ queue, args: { i } })),
        {},
      );
      const jobs = await claimAll(ctx, queue, 12);
      const items = jobs.map((j, i) => (i % 3 === 0 ? deadLetter(j) : i % 3 === 1 ? done(j) : requeue(j)));
      const calls = [items.slice(0, 8), items.slice(4), [...items].reverse()];
      const results = await Promise.all(calls.map((batch) => ctx.backend.runs.settle(batch)));
      const applied = calls.flatMap((batch, n) =>
        batch.filter((_, i) => results[n]?.[i] === true).map((x) => x.id),
      );
      equal(new Set(applied).size, applied.length, "no run may be reported applied twice");
      deepEqual(
        sorted(applied),
        sorted(jobs.map((j) => j.id)),
        "every run must be applied by exactly one call",
      );
      deepEqual(
        await stats(ctx, queue),
        { total: 12, queued: 4, processing: 0, done: 4, dead_letter: 4, cancelled: 0 },
        "stats after the concurrent settles",
      );
    },
  }),
  defineCase({
    id: "cancel/queued-and-processing",
    title: "cancel works on queued and processing jobs, returns false the second time and on finished jobs",
    async run(ctx) {
      const queued = await enqueue(ctx, { queue: ctx.queue() });
      equal(await ctx.backend.jobs.cancel(queued.id), true, "cancel of a queued job must return true");
      equal(await statusOf(ctx, queued.id), "cancelled", "a cancelled queued job must be cancelled");
      equal(await ctx.backend.jobs.cancel(queued.id), false, "a second cancel must return false");
      const running = await processingJob(ctx);
      equal(await ctx.backend.jobs.cancel(running.id), true, "cancel of a processing job must return true");
      equal(await statusOf(ctx, running.id), "cancelled", "a cancelled processing job must be cancelled");
      const finished = await processingJob(ctx);
      await settleOne(ctx, done(finished), "completing a job");
      equal(await ctx.backend.jobs.cancel(finished.id), false, "cancel of a done job must return false");
      equal(await statusOf(ctx, finished.id), "done", "a done job must stay done after cancel");
    },
  }),
  defineCase({
    id: "status/terminal-never-regresses",
    title: "no API write moves a done or cancelled job back (settle of any kind, cancel, claim)",
    async run(ctx) {
      const finished = await processingJob(ctx);
      await settleOne(ctx, done(finished), "completing a job");
      const cancelled = await processingJob(ctx);
      await cancelForSetup(ctx, cancelled.id, "a processing job");
      for (const [what, job, status] of [
        ["done", finished, "done"],
        ["cancelled", cancelled, "cancelled"],
      ] as const) {
        deepEqual(
          await ctx.backend.runs.settle([requeue(job), deadLetter(job), done(job)]),
          [false, false, false],
          `no settle item may apply to a ${what} job`,
        );
        equal(await ctx.backend.jobs.cancel(job.id), false, `cancel of a ${what} job must return false`);
        deepEqual(
          (await ctx.backend.runs.claim({ queues: [job.queue], limit: 5, workerId: null })).jobs,
          [],
          `a ${what} job must never be claimed`,
        );
        equal(await statusOf(ctx, job.id), status, `the ${what} job must stay ${status}`);
        equal(
          await ctx.backend.deadLetters.get(job.id),
          null,
          `no dead-letter row may appear for a ${what} job`,
        );
      }
    },
  }),
];
