/**
 * The attempt fence, one item per call: a late outcome of a run that was recovered (its worker declared
 * stale) and claimed again must not touch the second run's row. Each kind is sent alone, so it is the only
 * item for its job and a backend that fences one kind but not another shows it.
 */
import type { Settlement } from "@soniq/core/backend";
import { defineCase } from "../define-case.js";
import type { CaseContext } from "../types.js";
import { claimOne, deadLetter, deepEqual, done, enqueue, equal, requeue } from "./helpers.js";

/** A job claimed by a worker that then went stale and was recovered, and claimed again: both runs. */
async function reclaimedAfterRecovery(ctx: CaseContext) {
  const queue = ctx.queue("fence");
  const job = await enqueue(ctx, { queue, maxAttempts: 5 });
  const dead = ctx.id();
  await ctx.backend.workers.register({
    id: dead,
    hostname: "conformance",
    pid: 1,
    queues: [queue],
    concurrency: 1,
    version: null,
    metadata: null,
  });
  const first = await claimOne(ctx, queue, dead);
  await ctx.backend.workers.stop(dead);
  const recovery = await ctx.backend.workers.recoverStale(3_600_000);
  deepEqual(recovery.requeuedJobIds, [job.id], "recoverStale must requeue the stopped worker's job");
  const second = await claimOne(ctx, queue);
  equal(second.attempts, first.attempts + 1, "the second claim must count a new attempt");
  return { first, second };
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
];
