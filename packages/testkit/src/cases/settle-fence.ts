/**
 * The settle fence, one item per call: a late outcome of a run that was recovered (its worker declared
 * stale) and claimed again must not touch the second run's row; nor may the late outcome of a run whose
 * claim was lost (a Postgres claim commits asynchronously: a crash or a failover can lose it while its
 * worker runs the job), which carries the same attempt as the job's next claim, when the call names the
 * worker. Each kind is sent alone, so it is the only item for its job and a backend that fences one kind but
 * not another shows it.
 */
import type { Settlement } from "@soniq/core/backend";
import { defineCase } from "../define-case.js";
import type { CaseContext } from "../types.js";
import { claimOne, deadLetter, deepEqual, done, enqueue, equal, registerWorker, requeue } from "./helpers.js";

/** A job claimed by a worker that then went stale and was recovered, and claimed again: both runs. */
async function reclaimedAfterRecovery(ctx: CaseContext) {
  const queue = ctx.queue("fence");
  const job = await enqueue(ctx, { queue, maxAttempts: 5 });
  const dead = await registerWorker(ctx, queue);
  const first = await claimOne(ctx, queue, dead);
  await ctx.backend.workers.stop(dead);
  const recovery = await ctx.backend.workers.recoverStale(3_600_000);
  deepEqual(recovery.requeuedJobIds, [job.id], "recoverStale must requeue the stopped worker's job");
  const second = await claimOne(ctx, queue);
  equal(second.attempts, first.attempts + 1, "the second claim must count a new attempt");
  return { first, second };
}

/**
 * A claim by worker A that was lost, and the job's next claim, by worker B, at the same attempt. The loss is
 * modelled by undoing A's claim with a release (queued, attempt refunded): the row is then what a database
 * that lost the claim's commit holds, while A, which saw the claim, still runs the job.
 */
export async function reclaimedAfterLostClaim(ctx: CaseContext) {
  const queue = ctx.queue("lost");
  const job = await enqueue(ctx, { queue, maxAttempts: 5 });
  const a = await registerWorker(ctx, queue);
  const b = await registerWorker(ctx, queue);
  const first = await claimOne(ctx, queue, a);
  const undo = requeue(first, { cause: "snooze", attempts: first.attempts - 1 });
  deepEqual(await ctx.backend.runs.settle([undo], a), [true], "setup: undoing worker A's claim must apply");
  const second = await claimOne(ctx, queue, b);
  equal(second.id, job.id, "setup: worker B must claim the job again");
  equal(second.attempts, first.attempts, "setup: the claim after a lost one carries the same attempt");
  return { first, second, a, b };
}

const LATE: readonly [string, (first: { id: string; attempts: number }) => Settlement][] = [
  ["retry", (first) => requeue(first, { cause: "retry", attempts: first.attempts, lastError: "late retry" })],
  ["snooze", (first) => requeue(first, { cause: "snooze", attempts: first.attempts - 1, delayMs: 60_000 })],
  ["nack", (first) => requeue(first, { cause: "nack", attempts: first.attempts })],
  ["done", (first) => done(first, "late result")],
  ["dead letter", (first) => deadLetter(first, { error: "late failure" })],
];

export const settleFenceCases = [
  defineCase({
    id: "fencing/late-outcome-alone-after-recovery",
    title:
      "a late retry, snooze, nack, done or dead letter of a recovered run, sent alone, reports false and leaves the second run processing",
    async run(ctx) {
      for (const [kind, late] of LATE) {
        const { first, second } = await reclaimedAfterRecovery(ctx);
        deepEqual(
          await ctx.backend.runs.settle([late(first)]),
          [false],
          `a late ${kind} carrying attempt ${first.attempts} after a re-claim (attempt ${second.attempts}) must not apply`,
        );
        const row = await ctx.backend.jobs.get(first.id);
        equal(row?.status, "processing", `after a late ${kind}, the second run's job must stay processing`);
        equal(row?.attempts, second.attempts, `after a late ${kind}, attempts must stay the second run's`);
        equal(row?.lastError, null, `a late ${kind} must not set last_error`);
        equal(await ctx.backend.deadLetters.get(first.id), null, `a late ${kind} must not move the job`);
        deepEqual(
          await ctx.backend.runs.settle([done(second, "second run")]),
          [true],
          `after a late ${kind}, the second run's own outcome must apply`,
        );
      }
    },
  }),
  defineCase({
    id: "fencing/late-outcome-of-a-lost-claim",
    title:
      "with the worker named, a late retry, snooze, nack, done or dead letter of a run whose claim was lost reports false against the next claim at the same attempt",
    async run(ctx) {
      for (const [kind, late] of LATE) {
        const { first, second, a, b } = await reclaimedAfterLostClaim(ctx);
        deepEqual(
          await ctx.backend.runs.settle([late(first)], a),
          [false],
          `a late ${kind} by worker A must not apply to worker B's claim, though both carry attempt ${first.attempts}`,
        );
        const row = await ctx.backend.jobs.get(first.id);
        equal(
          row?.status,
          "processing",
          `after worker A's late ${kind}, worker B's run must stay processing`,
        );
        equal(row?.workerId, b, `after worker A's late ${kind}, the job must stay claimed by worker B`);
        equal(row?.lastError, null, `worker A's late ${kind} must not set last_error`);
        equal(
          await ctx.backend.deadLetters.get(first.id),
          null,
          `worker A's late ${kind} must not move the job`,
        );
        deepEqual(
          await ctx.backend.runs.settle([done(second, "second run")], b),
          [true],
          `after worker A's late ${kind}, worker B's own outcome, naming worker B, must apply`,
        );
      }
    },
  }),
];
