import assert from "node:assert/strict";
import { defineCase } from "../define-case.js";
import { delay } from "../eventually.js";
import {
  cancelForSetup,
  claimAll,
  deadLetter,
  deadLettered,
  deepEqual,
  describeError,
  done,
  enqueue,
  equal,
  ids,
  listDeadLetters,
  near,
  notEqual,
  processingJob,
  rejectsWith,
  settleOne,
  stats,
} from "./helpers.js";

const replayAsIs = { queue: null, priority: null, scheduledAt: null, traceId: null, traceContext: null };

export const deadLetterCases = [
  defineCase({
    id: "dlq/move-is-atomic",
    title:
      "a dead_letter item moves the job with every field, its reason, error and tags, under its id; the job is then only in the dead-letter table",
    async run(ctx) {
      const args = { to: "a@example.com", nested: { n: [1, 2] } };
      const job = await processingJob(ctx, {
        args,
        priority: 7,
        maxAttempts: 4,
        jobName: "conformance.dead",
      });
      const before = await ctx.backend.jobs.get(job.id);
      assert.ok(before !== null, "the processing job must be readable before the move");
      const tags = { source: "conformance", n: 1 };
      await settleOne(
        ctx,
        deadLetter(job, { reason: "permanent_failure", error: "PermanentError: no", tags }),
        "a dead_letter item for a processing job",
      );
      equal(await ctx.backend.jobs.get(job.id), null, "jobs.get must return null after the move");
      const dead = await ctx.backend.deadLetters.get(job.id);
      assert.ok(dead !== null, "the dead-letter row must exist under the job's id");
      equal(dead.id, job.id, "dead-letter id = job id");
      equal(dead.jobName, "conformance.dead", "jobName copied");
      deepEqual(dead.args, args, "args copied");
      equal(dead.queue, job.queue, "queue copied");
      equal(dead.priority, 7, "priority copied");
      equal(dead.maxAttempts, 4, "maxAttempts copied");
      equal(dead.attempts, job.attempts, "attempts as at the move");
      equal(dead.lastError, "PermanentError: no", "lastError = the item's error");
      equal(dead.deadLetterReason, "permanent_failure", "reason = the item's reason");
      deepEqual(dead.tags, tags, "tags = the item's tags");
      equal(dead.resurrectionCount, 0, "resurrectionCount starts at 0");
      equal(dead.lastResurrectionAt, null, "lastResurrectionAt starts null");
      equal(
        dead.originalCreatedAt.getTime(),
        before.createdAt.getTime(),
        "originalCreatedAt = the job's createdAt",
      );
      near(dead.movedToDeadLetterAt, Date.now(), 60_000, "movedToDeadLetterAt");
      const plain = await deadLettered(ctx, {}, { reason: "max_retries_exceeded", error: null, tags: null });
      const row = await ctx.backend.deadLetters.get(plain.id);
      equal(row?.lastError, null, "error null is stored as null");
      equal(row?.tags, null, "tags null are stored as null");
      equal(row?.deadLetterReason, "max_retries_exceeded", "each item's own reason");
    },
  }),
  defineCase({
    id: "dlq/conflict-leaves-source-intact",
    title:
      "a dead_letter item whose id already has a dead-letter row reports false and changes nothing; the others of the call apply",
    async run(ctx) {
      const queue = ctx.queue();
      const first = await deadLettered(ctx, { queue, args: { v: "first" } }, { error: "first" });
      // A new job with the same id (the tables are separate, so this insert is legal).
      await enqueue(ctx, { id: first.id, queue, args: { v: "second" } });
      await enqueue(ctx, { queue, args: { v: "other" } });
      const jobs = await claimAll(ctx, queue, 2);
      const again = jobs.find((j) => j.id === first.id);
      const other = jobs.find((j) => j.id !== first.id);
      assert.ok(again !== undefined && other !== undefined, "both jobs must be claimed");
      deepEqual(
        await ctx.backend.runs.settle([
          deadLetter(again, { reason: "max_retries_exceeded", error: "second" }),
          deadLetter(other, { error: "other" }),
        ]),
        [false, true],
        "the item whose id has a dead-letter row must report false; the other must apply",
      );
      const job = await ctx.backend.jobs.get(first.id);
      equal(job?.status, "processing", "the conflicting job must still be in soniq_jobs, processing");
      equal(job?.attempts, again.attempts, "the conflicting job's attempts must be unchanged");
      deepEqual(job?.args, { v: "second" }, "the conflicting job's row must be unchanged");
      equal(
        (await ctx.backend.deadLetters.get(first.id))?.lastError,
        "first",
        "the existing row is unchanged",
      );
      equal((await listDeadLetters(ctx, { queue })).length, 2, "no duplicate dead-letter row may appear");
      const s = await stats(ctx, queue);
      equal(s.processing, 1, "the conflicting job still counts as processing");
      equal(s.dead_letter, 2, "two dead-letter rows count");
    },
  }),
  defineCase({
    id: "dlq/fault-between-steps-leaves-source-intact",
    title:
      "a fault between the dead-letter insert and the job delete rejects the settle and leaves every item of the call as it was",
    requires: { deadLetterFault: true, inspector: ["readJob", "readDeadLetterJob"] },
    async run(ctx) {
      const queue = ctx.queue();
      for (let i = 0; i < 3; i++) await enqueue(ctx, { queue });
      const [a, b, c] = await claimAll(ctx, queue, 3);
      assert.ok(a && b && c, "three jobs must be claimed");
      const items = [done(a, "a"), deadLetter(b, { error: "x" }), deadLetter(c, { error: "y" })];
      await ctx.harness.injectDeadLetterFault?.();
      let failed = false;
      try {
        await ctx.backend.runs.settle(items);
      } catch {
        failed = true;
      }
      assert.ok(failed, "runs.settle must reject when the injected fault fires inside its dead-letter move");
      for (const job of [a, b, c]) {
        const raw = await ctx.inspector.readJob(job.id);
        equal(
          raw?.status,
          "processing",
          "every job of the failed call must still be in soniq_jobs, processing",
        );
        equal(raw?.attempts, job.attempts, "attempts must be unchanged");
        equal(await ctx.inspector.readDeadLetterJob(job.id), null, "there must be no dead-letter row");
      }
      // The fault was one-shot: the same call now applies.
      deepEqual(
        await ctx.backend.runs.settle(items),
        [true, true, true],
        "after the fault, the settle applies",
      );
      equal(await ctx.inspector.readJob(b.id), null, "the moved job must be gone from soniq_jobs");
      notEqual(
        await ctx.inspector.readDeadLetterJob(b.id),
        null,
        "the moved job must have a dead-letter row",
      );
    },
  }),
  defineCase({
    id: "dlq/concurrent-moves-keep-stats-consistent",
    title: "5 concurrent settles moving one job each land once; stats and both tables agree",
    async run(ctx) {
      const queue = ctx.queue();
      for (let i = 0; i < 5; i++) await enqueue(ctx, { queue });
      const claimed = await claimAll(ctx, queue, 5);
      const results = await Promise.all(
        claimed.map((j) => ctx.backend.runs.settle([deadLetter(j, { reason: "max_retries_exceeded" })])),
      );
      deepEqual(results, [[true], [true], [true], [true], [true]], "every concurrent move must apply once");
      deepEqual(
        await stats(ctx, queue),
        { total: 5, queued: 0, processing: 0, done: 0, dead_letter: 5, cancelled: 0 },
        "stats after 5 moves",
      );
      for (const j of claimed) {
        equal(await ctx.backend.jobs.get(j.id), null, "moved jobs must be gone from soniq_jobs");
      }
      equal((await listDeadLetters(ctx, { queue })).length, 5, "five dead-letter rows must be listed");
    },
  }),
  defineCase({
    id: "dlq/replay-mints-fresh-job",
    title:
      "replay inserts a queued job (new id, attempts 0, same name/args/max_attempts) and bumps the row's count",
    async run(ctx) {
      const job = await deadLettered(ctx, {
        args: { k: [1] },
        maxAttempts: 6,
        jobName: "conformance.replay",
      });
      const newId = ctx.id();
      equal(
        await ctx.backend.deadLetters.replay(job.id, { newId, ...replayAsIs }),
        newId,
        "replay returns the new id",
      );
      const fresh = await ctx.backend.jobs.get(newId);
      assert.ok(fresh !== null, "the replayed job must exist");
      equal(fresh.status, "queued", "a replayed job is queued");
      equal(fresh.attempts, 0, "a replayed job starts at attempts 0");
      equal(fresh.jobName, "conformance.replay", "a replayed job keeps the job name");
      deepEqual(fresh.args, { k: [1] }, "a replayed job keeps the args");
      equal(fresh.maxAttempts, 6, "a replayed job keeps max_attempts");
      equal(fresh.queue, job.queue, "replay keeps the queue unless told otherwise");
      const dead = await ctx.backend.deadLetters.get(job.id);
      equal(dead?.resurrectionCount, 1, "resurrectionCount must be 1 after one replay");
      near(dead?.lastResurrectionAt ?? undefined, Date.now(), 60_000, "lastResurrectionAt");
      const claimed = (await ctx.backend.runs.claim({ queues: [job.queue], limit: 5, workerId: null })).jobs;
      deepEqual(ids(claimed), [newId], "the replayed job must be claimable at once");
    },
  }),
  defineCase({
    id: "dlq/replay-twice-gives-two-jobs",
    title:
      "replaying twice gives two distinct jobs and resurrection_count 2; the request overrides queue, priority and scheduledAt",
    async run(ctx) {
      const job = await deadLettered(ctx);
      const a = ctx.id();
      const b = ctx.id();
      const other = ctx.queue("other");
      const later = new Date(Date.now() + 3_600_000);
      await ctx.backend.deadLetters.replay(job.id, { newId: a, ...replayAsIs });
      await ctx.backend.deadLetters.replay(job.id, {
        newId: b,
        queue: other,
        priority: 3,
        scheduledAt: later,
        traceId: null,
        traceContext: null,
      });
      equal((await ctx.backend.jobs.get(a))?.status, "queued", "the first replay must be queued");
      const second = await ctx.backend.jobs.get(b);
      equal(second?.queue, other, "replay with a queue must use it");
      equal(second?.priority, 3, "replay with a priority must use it");
      equal(second?.scheduledAt.getTime(), later.getTime(), "replay with a scheduledAt must use it");
      equal((await ctx.backend.deadLetters.get(job.id))?.resurrectionCount, 2, "two replays count 2");
    },
  }),
  defineCase({
    id: "dlq/purge-deletes-once",
    title: "purge deletes the dead-letter row; a second purge reports nothing deleted",
    async run(ctx) {
      const job = await deadLettered(ctx);
      equal(await ctx.backend.deadLetters.purge(job.id), true, "the first purge must return true");
      equal(await ctx.backend.deadLetters.get(job.id), null, "the row must be gone");
      equal(await ctx.backend.deadLetters.purge(job.id), false, "a second purge must return false");
      equal((await stats(ctx, job.queue)).dead_letter, 0, "a purged row must not count");
    },
  }),
  defineCase({
    id: "dlq/list-filters-and-order",
    title:
      "deadLetters.list filters by queue, jobName, reason and time while other queues and job names hold matching rows; newest first, paged",
    async run(ctx) {
      const queue = ctx.queue();
      const elsewhere = ctx.queue("elsewhere");
      const moved: string[] = [];
      const decoys: string[] = [];
      const specs = [
        ["conformance.job", "permanent_failure"],
        ["conformance.job", "max_retries_exceeded"],
        ["conformance.other", "permanent_failure"],
      ] as const;
      for (const [jobName, reason] of specs) {
        moved.push((await deadLettered(ctx, { queue, jobName }, { reason })).id);
        // The same name and reason in another queue, at about the same time: a filter must leave it out.
        decoys.push((await deadLettered(ctx, { queue: elsewhere, jobName }, { reason })).id);
        await delay(3);
      }
      const all = await listDeadLetters(ctx, { queue });
      deepEqual(
        ids(all),
        [...moved].reverse(),
        `list({ queue }) must return that queue's rows only, newest first`,
      );
      deepEqual(
        ids(await listDeadLetters(ctx, { queue, reason: "permanent_failure" })),
        [moved[2], moved[0]],
        "list({ queue, reason }) must apply both filters",
      );
      deepEqual(
        ids(await listDeadLetters(ctx, { queue, jobName: "conformance.other" })),
        [moved[2]],
        "list({ queue, jobName }) must apply both filters",
      );
      deepEqual(
        ids(await listDeadLetters(ctx, { queue, limit: 1, offset: 1 })),
        [moved[1]],
        "limit 1 offset 1 must return the second newest row of the queue",
      );
      const middle = all[1]?.movedToDeadLetterAt as Date;
      deepEqual(
        ids(await listDeadLetters(ctx, { queue, since: middle })),
        [moved[2], moved[1]],
        "since is inclusive and combines with the queue filter",
      );
      deepEqual(
        ids(await listDeadLetters(ctx, { queue, until: middle })),
        [moved[0]],
        "until is exclusive and combines with the queue filter",
      );
      const byName = ids(await listDeadLetters(ctx, { jobName: "conformance.other" }));
      assert.ok(
        byName.includes(moved[2] as string) && byName.includes(decoys[2] as string),
        "list({ jobName }) without a queue must return that name's rows of every queue",
      );
      assert.ok(!byName.includes(moved[0] as string), "list({ jobName }) must leave out other job names");
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
      equal(await ctx.backend.deadLetters.get(job.id), null, "no dead-letter row may appear");
    },
  }),
  defineCase({
    id: "status/raw-terminal-regressions-rejected",
    title:
      "raw writes moving a done or cancelled job to another status are rejected with SONIQ_INVALID_STATUS_TRANSITION",
    requires: { inspector: ["writeJobStatus", "readJob"] },
    async run(ctx) {
      const finished = await processingJob(ctx);
      await settleOne(ctx, done(finished), "completing a job");
      const cancelled = await enqueue(ctx, { queue: ctx.queue() });
      await cancelForSetup(ctx, cancelled.id, "a job");
      const cases: [string, string, string][] = [
        [finished.id, "done", "queued"],
        [finished.id, "done", "processing"],
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
