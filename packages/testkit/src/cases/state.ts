import assert from "node:assert/strict";
import { defineCase } from "../define-case.js";
import { claimOne, deepEqual, enqueue, equal, near, processingJob, statusOf } from "./helpers.js";

export const stateCases = [
  defineCase({
    id: "complete/stores-result-and-expiry",
    title: "complete marks done, stores the result and sets expires_at = now + resultTtlMs",
    async run(ctx) {
      const job = await processingJob(ctx);
      const result = { ok: true, items: [1, "two", null] };
      const applied = await ctx.backend.complete([
        { id: job.id, attempt: job.attempts, result, resultTtlMs: 3_600_000 },
      ]);
      equal(applied, 1, "complete must report 1 applied");
      const done = await ctx.backend.getJob(job.id);
      equal(done?.status, "done", "the job must be done");
      deepEqual(done?.result, result, "the result must be stored as given");
      assert.ok(done?.expiresAt instanceof Date, "expiresAt must be set for a TTL > 0");
      near(done.expiresAt, Date.now() + 3_600_000, 60_000, "expiresAt");
    },
  }),
  defineCase({
    id: "complete/ttl-zero-deletes",
    title: "complete with resultTtlMs 0 deletes the row",
    async run(ctx) {
      const job = await processingJob(ctx);
      equal(
        await ctx.backend.complete([{ id: job.id, attempt: job.attempts, result: 1, resultTtlMs: 0 }]),
        1,
      );
      equal(await ctx.backend.getJob(job.id), null, "a job completed with TTL 0 must be gone");
    },
  }),
  defineCase({
    id: "complete/batch-counts-only-applied",
    title: "a batched complete applies to each fenced item and counts only those",
    async run(ctx) {
      const queue = ctx.queue();
      for (let i = 0; i < 3; i++) await enqueue(ctx, { queue });
      const [a, b, c] = await ctx.backend.claim({ queues: [queue], limit: 3, workerId: null });
      assert.ok(a && b && c, "three jobs must be claimed");
      await ctx.backend.cancel(c.id);
      const applied = await ctx.backend.complete([
        { id: a.id, attempt: a.attempts, result: "a", resultTtlMs: 60_000 },
        { id: b.id, attempt: b.attempts + 1, result: "b", resultTtlMs: 60_000 },
        { id: c.id, attempt: c.attempts, result: "c", resultTtlMs: 60_000 },
      ]);
      equal(applied, 1, "only the item with the right attempt on a processing row may apply");
      equal(await statusOf(ctx, a.id), "done");
      equal(await statusOf(ctx, b.id), "processing", "a complete with a stale attempt must change nothing");
      equal(await statusOf(ctx, c.id), "cancelled", "a complete after cancel must change nothing");
    },
  }),
  defineCase({
    id: "retry/requeues-with-error-and-delay",
    title: "retry sets queued, last_error, scheduled_at = now + delayMs, and keeps attempts",
    async run(ctx) {
      const job = await processingJob(ctx);
      const ok = await ctx.backend.retry(
        { id: job.id, attempt: job.attempts },
        { error: "Error: boom", delayMs: 600_000 },
      );
      equal(ok, true, "retry of a processing job must return true");
      const row = await ctx.backend.getJob(job.id);
      equal(row?.status, "queued");
      equal(row?.lastError, "Error: boom", "last_error must be the error passed");
      equal(row?.attempts, job.attempts, "retry must not change attempts (the claim counted the run)");
      near(row?.scheduledAt ?? new Date(Number.NaN), Date.now() + 600_000, 60_000, "scheduledAt after retry");
      const early = await ctx.backend.claim({ queues: [job.queue], limit: 1, workerId: null });
      deepEqual(early, [], "a retried job must not be claimable before its delay passes");
    },
  }),
  defineCase({
    id: "nack/gives-back-untouched",
    title:
      "nack requeues due now with attempts and last_error unchanged; it is idempotent and acts only on processing rows",
    async run(ctx) {
      const queue = ctx.queue();
      const job = await enqueue(ctx, { queue });
      const first = await claimOne(ctx, queue);
      await ctx.backend.retry(
        { id: job.id, attempt: first.attempts },
        { error: "first failure", delayMs: 0 },
      );
      const second = await claimOne(ctx, queue);
      equal(
        await ctx.backend.nack({ id: job.id, attempt: second.attempts }),
        true,
        "nack of a processing job must return true",
      );
      const row = await ctx.backend.getJob(job.id);
      equal(row?.status, "queued");
      equal(row?.attempts, 2, "nack must keep attempts");
      equal(row?.lastError, "first failure", "nack must keep last_error");
      equal(
        await ctx.backend.nack({ id: job.id, attempt: second.attempts }),
        false,
        "a second nack must return false",
      );
      equal((await ctx.backend.getJob(job.id))?.attempts, 2, "a second nack must change nothing");
      const again = await claimOne(ctx, queue);
      equal(again.id, job.id, "a nacked job must be due at once");
    },
  }),
  defineCase({
    id: "nack/refund-attempt-gives-back-the-claim",
    title:
      "nack with refundAttempt requeues due now with attempts - 1, worker_id cleared and last_error unchanged; fenced",
    async run(ctx) {
      const queue = ctx.queue();
      const workerId = ctx.id();
      await ctx.backend.registerWorker({
        id: workerId,
        hostname: "conformance",
        pid: 1,
        queues: [queue],
        concurrency: 1,
        version: null,
        metadata: null,
      });
      const job = await enqueue(ctx, { queue, maxAttempts: 2 });
      const first = await claimOne(ctx, queue, workerId);
      await ctx.backend.retry(
        { id: job.id, attempt: first.attempts },
        { error: "first failure", delayMs: 0 },
      );
      const second = await claimOne(ctx, queue, workerId);
      equal(second.attempts, 2);
      const ref = { id: job.id, attempt: second.attempts };
      equal(
        await ctx.backend.nack({ id: job.id, attempt: 1 }, { refundAttempt: true }),
        false,
        "a refund carrying an old attempt must be a no-op",
      );
      equal(
        await ctx.backend.nack(ref, { refundAttempt: true }),
        true,
        "the refund of a processing job applies",
      );
      const row = await ctx.backend.getJob(job.id);
      equal(row?.status, "queued");
      equal(row?.attempts, 1, "refundAttempt must give back the claim's attempt");
      equal(row?.lastError, "first failure", "refundAttempt must keep last_error");
      equal(row?.workerId, null, "nack must clear worker_id");
      equal(await ctx.backend.nack(ref, { refundAttempt: true }), false, "a second refund must return false");
      equal((await ctx.backend.getJob(job.id))?.attempts, 1, "a second refund must change nothing");
      // maxAttempts 2 and 2 claims so far: without the refund this claim would dead-letter the job.
      const again = await claimOne(ctx, queue, workerId);
      equal(again.id, job.id, "a refunded job must be due at once and claimable within its budget");
      equal(again.attempts, 2);
      await ctx.backend.nack({ id: job.id, attempt: again.attempts }, { refundAttempt: false });
      equal((await ctx.backend.getJob(job.id))?.attempts, 2, "refundAttempt: false keeps attempts");
    },
  }),
  defineCase({
    id: "reschedule/snooze-keeps-attempt",
    title: "reschedule requeues after delayMs with attempts - 1 and last_error 'SNOOZE: <reason>'",
    async run(ctx) {
      const job = await processingJob(ctx);
      const ok = await ctx.backend.reschedule(
        { id: job.id, attempt: job.attempts },
        { delayMs: 600_000, reason: "rate limited" },
      );
      equal(ok, true);
      const row = await ctx.backend.getJob(job.id);
      equal(row?.status, "queued");
      equal(row?.attempts, job.attempts - 1, "a snooze must give the attempt back");
      equal(row?.lastError, "SNOOZE: rate limited");
      near(
        row?.scheduledAt ?? new Date(Number.NaN),
        Date.now() + 600_000,
        60_000,
        "scheduledAt after reschedule",
      );
      const other = await processingJob(ctx);
      await ctx.backend.reschedule({ id: other.id, attempt: other.attempts }, { delayMs: 0 });
      equal(
        (await ctx.backend.getJob(other.id))?.lastError,
        "SNOOZE",
        "without a reason last_error must be 'SNOOZE'",
      );
    },
  }),
  defineCase({
    id: "cancel/queued-and-processing",
    title: "cancel works on queued and processing jobs, returns false the second time and on finished jobs",
    async run(ctx) {
      const queued = await enqueue(ctx, { queue: ctx.queue() });
      equal(await ctx.backend.cancel(queued.id), true, "cancel of a queued job must return true");
      equal(await statusOf(ctx, queued.id), "cancelled");
      equal(await ctx.backend.cancel(queued.id), false, "a second cancel must return false");
      const running = await processingJob(ctx);
      equal(await ctx.backend.cancel(running.id), true, "cancel of a processing job must return true");
      equal(await statusOf(ctx, running.id), "cancelled");
      const done = await processingJob(ctx);
      await ctx.backend.complete([
        { id: done.id, attempt: done.attempts, result: null, resultTtlMs: 60_000 },
      ]);
      equal(await ctx.backend.cancel(done.id), false, "cancel of a done job must return false");
      equal(await statusOf(ctx, done.id), "done");
    },
  }),
  defineCase({
    id: "fencing/late-writes-are-no-ops",
    title: "worker writes carrying an old attempt (after cancel, nack or a re-claim) change nothing",
    async run(ctx) {
      const queue = ctx.queue();
      const job = await enqueue(ctx, { queue, maxAttempts: 5 });
      const first = await claimOne(ctx, queue);
      await ctx.backend.nack({ id: job.id, attempt: first.attempts });
      const second = await claimOne(ctx, queue);
      const stale = { id: job.id, attempt: first.attempts };
      equal(
        await ctx.backend.complete([{ ...stale, result: "late", resultTtlMs: 60_000 }]),
        0,
        "complete with attempt 1 after a re-claim (attempt 2) must apply 0",
      );
      equal(
        await ctx.backend.retry(stale, { error: "late", delayMs: 0 }),
        false,
        "retry with a stale attempt must return false",
      );
      equal(await ctx.backend.nack(stale), false, "nack with a stale attempt must return false");
      equal(
        await ctx.backend.reschedule(stale, { delayMs: 0 }),
        false,
        "reschedule with a stale attempt must return false",
      );
      equal(
        await ctx.backend.markJobDeadLetter(job.id, {
          reason: "permanent_failure",
          error: "late",
          attempt: first.attempts,
        }),
        false,
        "markJobDeadLetter with a stale attempt must return false",
      );
      const row = await ctx.backend.getJob(job.id);
      equal(row?.status, "processing", "the current run's row must be untouched");
      equal(row?.attempts, second.attempts);
      equal(row?.lastError, null, "no late write may set last_error");
      await ctx.backend.cancel(job.id);
      const current = { id: job.id, attempt: second.attempts };
      equal(
        await ctx.backend.complete([{ ...current, result: 1, resultTtlMs: 60_000 }]),
        0,
        "complete after cancel must apply 0",
      );
      equal(
        await ctx.backend.retry(current, { error: "x", delayMs: 0 }),
        false,
        "retry after cancel must return false",
      );
      equal(await statusOf(ctx, job.id), "cancelled", "a cancelled job must stay cancelled");
    },
  }),
  defineCase({
    id: "status/terminal-never-regresses",
    title:
      "no API write moves a done or cancelled job back (retry, nack, reschedule, cancel, dead-letter, claim)",
    async run(ctx) {
      const done = await processingJob(ctx);
      const ref = { id: done.id, attempt: done.attempts };
      await ctx.backend.complete([{ ...ref, result: null, resultTtlMs: 60_000 }]);
      equal(
        await ctx.backend.retry(ref, { error: "x", delayMs: 0 }),
        false,
        "retry of a done job must return false",
      );
      equal(await ctx.backend.nack(ref), false, "nack of a done job must return false");
      equal(
        await ctx.backend.reschedule(ref, { delayMs: 0 }),
        false,
        "reschedule of a done job must return false",
      );
      equal(await ctx.backend.cancel(done.id), false, "cancel of a done job must return false");
      equal(
        await ctx.backend.markJobDeadLetter(done.id, { reason: "permanent_failure", error: null }),
        false,
        "markJobDeadLetter of a done job must return false",
      );
      deepEqual(
        await ctx.backend.claim({ queues: [done.queue], limit: 5, workerId: null }),
        [],
        "a done job must never be claimed",
      );
      equal(await statusOf(ctx, done.id), "done", "the done job must stay done");
      equal(
        await ctx.backend.getDeadLetterJob(done.id),
        null,
        "no dead-letter row may appear for a done job",
      );
    },
  }),
];
