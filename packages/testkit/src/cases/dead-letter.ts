import assert from "node:assert/strict";
import { defineCase } from "../define-case.js";
import { delay } from "../eventually.js";
import {
  deepEqual,
  describeError,
  enqueue,
  equal,
  ids,
  near,
  processingJob,
  rejectsWith,
} from "./helpers.js";

export const deadLetterCases = [
  defineCase({
    id: "dlq/move-is-atomic",
    title: "the move copies every field, keeps the id, and the job is then only in the dead-letter table",
    async run(ctx) {
      const args = { to: "a@example.com", nested: { n: [1, 2] } };
      const job = await processingJob(ctx, {
        args,
        priority: 7,
        maxAttempts: 4,
        jobName: "conformance.dead",
      });
      const before = await ctx.backend.getJob(job.id);
      assert.ok(before !== null);
      const tags = { source: "conformance", n: 1 };
      const moved = await ctx.backend.markJobDeadLetter(job.id, {
        reason: "permanent_failure",
        error: "PermanentError: no",
        tags,
        attempt: job.attempts,
      });
      equal(moved, true, "markJobDeadLetter of a processing job must return true");
      equal(await ctx.backend.getJob(job.id), null, "getJob must return null after the move");
      const dead = await ctx.backend.getDeadLetterJob(job.id);
      assert.ok(dead !== null, "the dead-letter row must exist under the job's id");
      equal(dead.id, job.id, "dead-letter id = job id");
      equal(dead.jobName, "conformance.dead", "jobName copied");
      deepEqual(dead.args, args, "args copied");
      equal(dead.queue, job.queue, "queue copied");
      equal(dead.priority, 7, "priority copied");
      equal(dead.maxAttempts, 4, "maxAttempts copied");
      equal(dead.attempts, job.attempts, "attempts as at the move");
      equal(dead.lastError, "PermanentError: no", "lastError as passed");
      equal(dead.deadLetterReason, "permanent_failure", "reason as passed");
      deepEqual(dead.tags, tags, "tags as passed");
      equal(dead.resurrectionCount, 0, "resurrectionCount starts at 0");
      equal(dead.lastResurrectionAt, null, "lastResurrectionAt starts null");
      equal(
        dead.originalCreatedAt.getTime(),
        before.createdAt.getTime(),
        "originalCreatedAt = the job's createdAt",
      );
      near(dead.movedToDeadLetterAt, Date.now(), 60_000, "movedToDeadLetterAt");
    },
  }),
  defineCase({
    id: "dlq/moves-queued-jobs-without-attempt",
    title: "without `attempt`, a queued job can be moved (operator action); a done job cannot",
    async run(ctx) {
      const job = await enqueue(ctx, { queue: ctx.queue() });
      equal(await ctx.backend.markJobDeadLetter(job.id, { reason: "permanent_failure", error: null }), true);
      const dead = await ctx.backend.getDeadLetterJob(job.id);
      equal(dead?.attempts, 0, "a never-run job moves with attempts 0");
      equal(dead?.lastError, null, "error null is stored as null");
      equal(dead?.tags, null, "tags default to null");
      const done = await processingJob(ctx);
      await ctx.backend.complete([
        { id: done.id, attempt: done.attempts, result: null, resultTtlMs: 60_000 },
      ]);
      equal(
        await ctx.backend.markJobDeadLetter(done.id, { reason: "permanent_failure", error: null }),
        false,
      );
    },
  }),
  defineCase({
    id: "dlq/conflict-leaves-source-intact",
    title: "a move onto an existing dead-letter id throws SONIQ_DEAD_LETTER_CONFLICT and changes nothing",
    async run(ctx) {
      const queue = ctx.queue();
      const first = await enqueue(ctx, { queue, args: { v: "first" } });
      await ctx.backend.markJobDeadLetter(first.id, { reason: "permanent_failure", error: "first" });
      // A new job with the same id (the tables are separate, so this insert is legal).
      await enqueue(ctx, { id: first.id, queue, args: { v: "second" } });
      await rejectsWith(
        ctx.backend.markJobDeadLetter(first.id, { reason: "max_retries_exceeded", error: "second" }),
        "SONIQ_DEAD_LETTER_CONFLICT",
        "markJobDeadLetter onto an existing dead-letter row",
      );
      const job = await ctx.backend.getJob(first.id);
      equal(job?.status, "queued", "the source job must still be in soniq_jobs, queued");
      deepEqual(job?.args, { v: "second" });
      const dead = await ctx.backend.listDeadLetterJobs({ queue });
      equal(dead.length, 1, "there must be no duplicate dead-letter row");
      equal(dead[0]?.lastError, "first", "the existing dead-letter row must be unchanged");
      const stats = await ctx.backend.getQueueStats({ queue });
      equal(stats.queued, 1);
      equal(stats.dead_letter, 1);
    },
  }),
  defineCase({
    id: "dlq/fault-between-steps-leaves-source-intact",
    title: "a fault between the insert and the delete rejects the call and leaves the pre-move state",
    requires: { deadLetterFault: true, inspector: ["readJob", "readDeadLetterJob"] },
    async run(ctx) {
      const job = await processingJob(ctx);
      await ctx.harness.injectDeadLetterFault?.();
      let failed = false;
      try {
        await ctx.backend.markJobDeadLetter(job.id, {
          reason: "permanent_failure",
          error: "x",
          attempt: job.attempts,
        });
      } catch {
        failed = true;
      }
      assert.ok(failed, "markJobDeadLetter must reject when the injected fault fires between its steps");
      const raw = await ctx.inspector.readJob(job.id);
      equal(raw?.status, "processing", "the job must still be in soniq_jobs, processing");
      equal(raw?.attempts, job.attempts, "its attempts must be unchanged");
      equal(await ctx.inspector.readDeadLetterJob(job.id), null, "there must be no dead-letter row");
      // The fault was one-shot: the move now succeeds.
      equal(
        await ctx.backend.markJobDeadLetter(job.id, {
          reason: "permanent_failure",
          error: "x",
          attempt: job.attempts,
        }),
        true,
        "after the one-shot fault, the move must succeed",
      );
      equal(await ctx.inspector.readJob(job.id), null);
      assert.notEqual(await ctx.inspector.readDeadLetterJob(job.id), null);
    },
  }),
  defineCase({
    id: "dlq/concurrent-moves-keep-stats-consistent",
    title: "5 concurrent moves each land once; stats and both tables agree",
    async run(ctx) {
      const queue = ctx.queue();
      const jobs = await Promise.all(Array.from({ length: 5 }, () => enqueue(ctx, { queue })));
      const claimed = await ctx.backend.claim({ queues: [queue], limit: 5, workerId: null });
      equal(claimed.length, 5);
      const results = await Promise.all(
        claimed.map((j) =>
          ctx.backend.markJobDeadLetter(j.id, {
            reason: "max_retries_exceeded",
            error: "e",
            attempt: j.attempts,
          }),
        ),
      );
      deepEqual(results, [true, true, true, true, true], "every concurrent move must succeed once");
      const stats = await ctx.backend.getQueueStats({ queue });
      deepEqual(
        stats,
        { total: 5, queued: 0, processing: 0, done: 0, dead_letter: 5, cancelled: 0 },
        "stats after 5 moves",
      );
      for (const j of jobs)
        equal(await ctx.backend.getJob(j.id), null, "moved jobs must be gone from soniq_jobs");
      equal((await ctx.backend.listDeadLetterJobs({ queue })).length, 5);
    },
  }),
  defineCase({
    id: "dlq/replay-mints-fresh-job",
    title:
      "replay inserts a queued job (new id, attempts 0, same name/args/max_attempts) and bumps the row's count",
    async run(ctx) {
      const job = await processingJob(ctx, {
        args: { k: [1] },
        maxAttempts: 6,
        jobName: "conformance.replay",
      });
      await ctx.backend.markJobDeadLetter(job.id, {
        reason: "max_retries_exceeded",
        error: "e",
        attempt: job.attempts,
      });
      const newId = ctx.id();
      equal(await ctx.backend.replayDeadLetterJob(job.id, { newId }), newId, "replay must return the new id");
      const fresh = await ctx.backend.getJob(newId);
      assert.ok(fresh !== null, "the replayed job must exist");
      equal(fresh.status, "queued");
      equal(fresh.attempts, 0, "a replayed job starts at attempts 0");
      equal(fresh.jobName, "conformance.replay");
      deepEqual(fresh.args, { k: [1] });
      equal(fresh.maxAttempts, 6);
      equal(fresh.queue, job.queue, "replay keeps the queue unless told otherwise");
      const dead = await ctx.backend.getDeadLetterJob(job.id);
      equal(dead?.resurrectionCount, 1, "resurrectionCount must be 1 after one replay");
      near(dead?.lastResurrectionAt ?? new Date(Number.NaN), Date.now(), 60_000, "lastResurrectionAt");
      const claimed = await ctx.backend.claim({ queues: [job.queue], limit: 5, workerId: null });
      deepEqual(ids(claimed), [newId], "the replayed job must be claimable at once");
    },
  }),
  defineCase({
    id: "dlq/replay-twice-gives-two-jobs",
    title:
      "replaying twice gives two distinct jobs and resurrection_count 2; options override queue and priority",
    async run(ctx) {
      const job = await enqueue(ctx, { queue: ctx.queue() });
      await ctx.backend.markJobDeadLetter(job.id, { reason: "permanent_failure", error: null });
      const a = ctx.id();
      const b = ctx.id();
      const other = ctx.queue("other");
      await ctx.backend.replayDeadLetterJob(job.id, { newId: a });
      await ctx.backend.replayDeadLetterJob(job.id, { newId: b, queue: other, priority: 3 });
      assert.notEqual(a, b);
      equal((await ctx.backend.getJob(a))?.status, "queued");
      const second = await ctx.backend.getJob(b);
      equal(second?.queue, other, "replay with a queue option must use it");
      equal(second?.priority, 3, "replay with a priority option must use it");
      equal((await ctx.backend.getDeadLetterJob(job.id))?.resurrectionCount, 2);
    },
  }),
  defineCase({
    id: "dlq/purge-deletes-once",
    title: "purge deletes the dead-letter row; a second purge reports nothing deleted",
    async run(ctx) {
      const job = await enqueue(ctx, { queue: ctx.queue() });
      await ctx.backend.markJobDeadLetter(job.id, { reason: "permanent_failure", error: null });
      equal(await ctx.backend.purgeDeadLetterJob(job.id), true, "the first purge must return true");
      equal(await ctx.backend.getDeadLetterJob(job.id), null, "the row must be gone");
      equal(await ctx.backend.purgeDeadLetterJob(job.id), false, "a second purge must return false");
      equal((await ctx.backend.getQueueStats({ queue: job.queue })).dead_letter, 0);
    },
  }),
  defineCase({
    id: "dlq/list-filters-and-order",
    title: "listDeadLetterJobs filters by queue, jobName, reason and time, newest first, with limit/offset",
    async run(ctx) {
      const queue = ctx.queue();
      const moved: string[] = [];
      for (const [i, reason] of [
        "permanent_failure",
        "max_retries_exceeded",
        "permanent_failure",
      ].entries()) {
        const job = await enqueue(ctx, { queue, jobName: i === 2 ? "conformance.other" : "conformance.job" });
        await ctx.backend.markJobDeadLetter(job.id, { reason, error: null });
        moved.push(job.id);
        await delay(3);
      }
      const all = await ctx.backend.listDeadLetterJobs({ queue });
      deepEqual(ids(all), [...moved].reverse(), "newest first (moved_to_dead_letter_at descending)");
      deepEqual(ids(await ctx.backend.listDeadLetterJobs({ queue, reason: "permanent_failure" })), [
        moved[2],
        moved[0],
      ]);
      deepEqual(ids(await ctx.backend.listDeadLetterJobs({ queue, jobName: "conformance.other" })), [
        moved[2],
      ]);
      deepEqual(ids(await ctx.backend.listDeadLetterJobs({ queue, limit: 1, offset: 1 })), [moved[1]]);
      const middle = all[1]?.movedToDeadLetterAt as Date;
      deepEqual(
        ids(await ctx.backend.listDeadLetterJobs({ queue, since: middle })),
        [moved[2], moved[1]],
        "since is inclusive",
      );
      deepEqual(
        ids(await ctx.backend.listDeadLetterJobs({ queue, until: middle })),
        [moved[0]],
        "until is exclusive",
      );
    },
  }),
  defineCase({
    id: "dlq/dead-letter-is-not-a-job-status",
    title:
      "writing status 'dead_letter' (or any value outside the four) to a job is rejected and changes nothing",
    requires: { inspector: ["writeJobStatus", "readJob"] },
    async run(ctx) {
      const job = await enqueue(ctx, { queue: ctx.queue() });
      for (const status of ["dead_letter", "failed", ""]) {
        await rejectsWith(
          ctx.inspector.writeJobStatus(job.id, status),
          "SONIQ_INVALID_STATUS_TRANSITION",
          `writing status "${status}" to a job`,
        );
        equal(
          (await ctx.inspector.readJob(job.id))?.status,
          "queued",
          `after the rejected "${status}" write the job must be queued`,
        );
      }
      equal(await ctx.backend.getDeadLetterJob(job.id), null);
    },
  }),
  defineCase({
    id: "status/raw-terminal-regressions-rejected",
    title:
      "raw writes moving a done or cancelled job to another status are rejected with SONIQ_INVALID_STATUS_TRANSITION",
    requires: { inspector: ["writeJobStatus", "readJob"] },
    async run(ctx) {
      const done = await processingJob(ctx);
      await ctx.backend.complete([
        { id: done.id, attempt: done.attempts, result: null, resultTtlMs: 60_000 },
      ]);
      const cancelled = await enqueue(ctx, { queue: ctx.queue() });
      await ctx.backend.cancel(cancelled.id);
      const cases: [string, string, string][] = [
        [done.id, "done", "queued"],
        [done.id, "done", "processing"],
        [cancelled.id, "cancelled", "queued"],
        [cancelled.id, "cancelled", "processing"],
        [cancelled.id, "cancelled", "done"],
      ];
      for (const [id, from, to] of cases) {
        let error: unknown;
        await ctx.inspector.writeJobStatus(id, to).catch((e: unknown) => {
          error = e;
        });
        assert.ok(error !== undefined, `${from} -> ${to} must be rejected, but the write succeeded`);
        assert.ok(
          (error as { code?: string }).code === "SONIQ_INVALID_STATUS_TRANSITION",
          `${from} -> ${to} must fail with SONIQ_INVALID_STATUS_TRANSITION, got ${describeError(error)}`,
        );
        equal(
          (await ctx.inspector.readJob(id))?.status,
          from,
          `after the rejected ${from} -> ${to} the job must be ${from}`,
        );
      }
    },
  }),
];
