/**
 * Versions of a job's arguments (DESIGN.md section 20): every job and dead letter stores `args_version` as
 * given (null: unversioned), a worker older than a job gives it back without spending an attempt, and the task
 * registry stores the version each worker's handler takes.
 */
import assert from "node:assert/strict";
import type { Job } from "@soniq/core/backend";
import { defineCase } from "../define-case.js";
import {
  claimAll,
  claimOne,
  deadLetter,
  deepEqual,
  enqueue,
  equal,
  listDeadLetters,
  listJobs,
  near,
  processingJob,
  requeue,
  settleOne,
} from "./helpers.js";

const replayAsIs = { queue: null, priority: null, scheduledAt: null, traceId: null, traceContext: null };

/** id -> argsVersion of each row, for comparing reads that return several rows in any order. */
function versions(
  rows: readonly { id: string; argsVersion: number | null }[],
): Record<string, number | null> {
  return Object.fromEntries(rows.map((r) => [r.id, r.argsVersion]));
}

export const versionCases = [
  defineCase({
    id: "jobs/args-version-stored",
    title:
      "args_version is stored as given (null or a number) by enqueue and enqueueMany, read back by get, list and claim, kept by the dead-letter move and copied by a replay",
    async run(ctx) {
      const queue = ctx.queue("ver");
      const v3 = await enqueue(ctx, { queue, argsVersion: 3 });
      const plain = await enqueue(ctx, { queue, argsVersion: null });
      const many = [ctx.newJob({ queue, argsVersion: 7 }), ctx.newJob({ queue, argsVersion: null })];
      await ctx.backend.jobs.enqueueMany(many, {});
      const want = { [v3.id]: 3, [plain.id]: null, [many[0]?.id ?? ""]: 7, [many[1]?.id ?? ""]: null };
      for (const [id, version] of Object.entries(want)) {
        equal(
          (await ctx.backend.jobs.get(id))?.argsVersion,
          version,
          `jobs.get(${id}).argsVersion as enqueued`,
        );
      }
      deepEqual(versions(await listJobs(ctx, { queue })), want, "jobs.list returns each job's argsVersion");
      const claimed = await claimAll(ctx, queue, 4);
      deepEqual(versions(claimed), want, "runs.claim returns each job's argsVersion");
      const byId = (id: string): Job => {
        const job = claimed.find((j) => j.id === id);
        assert.ok(job !== undefined, `setup: job ${id} must be among the claimed`);
        return job;
      };
      for (const id of [v3.id, plain.id]) {
        await settleOne(
          ctx,
          deadLetter(byId(id)),
          "moving a versioned or unversioned job to the dead letters",
        );
      }
      equal(
        (await ctx.backend.deadLetters.get(v3.id))?.argsVersion,
        3,
        "the dead-letter move keeps argsVersion 3",
      );
      equal(
        (await ctx.backend.deadLetters.get(plain.id))?.argsVersion,
        null,
        "the dead-letter move keeps an unversioned job's argsVersion null",
      );
      deepEqual(
        versions(await listDeadLetters(ctx, { queue })),
        { [v3.id]: 3, [plain.id]: null },
        "deadLetters.list returns each dead letter's argsVersion",
      );
      const replays = { [v3.id]: ctx.id(), [plain.id]: ctx.id() };
      for (const [id, newId] of Object.entries(replays)) {
        equal(
          await ctx.backend.deadLetters.replay(id, { newId, ...replayAsIs }),
          newId,
          "replay returns the new id",
        );
      }
      equal(
        (await ctx.backend.jobs.get(replays[v3.id] ?? ""))?.argsVersion,
        3,
        "a replay copies the dead letter's argsVersion (3) to the new job, as it copies name and args",
      );
      equal(
        (await ctx.backend.jobs.get(replays[plain.id] ?? ""))?.argsVersion,
        null,
        "a replay of an unversioned dead letter gives an unversioned job",
      );
      deepEqual(
        versions(await claimAll(ctx, queue, 2)),
        { [replays[v3.id] ?? ""]: 3, [replays[plain.id] ?? ""]: null },
        "runs.claim returns the replayed jobs' argsVersion",
      );
    },
  }),
  defineCase({
    id: "jobs/args-version-give-back",
    title:
      "a requeue giving the claim's attempt back (a worker older than the job) leaves it queued with its attempts from before the claim, last_error and args_version untouched, due after delayMs",
    async run(ctx) {
      const queue = ctx.queue("giveback");
      const first = await processingJob(ctx, { queue, argsVersion: 4 });
      equal(first.argsVersion, 4, "runs.claim returns the job's argsVersion");
      // One attempt spent for real (a retry), so the give-back is seen to restore 1, not reset to 0.
      await settleOne(ctx, requeue(first, { lastError: "Error: first run" }), "a retry of the first run");
      const second = await claimOne(ctx, queue);
      equal(second.id, first.id, "setup: the retried job is claimed again");
      const before = second.attempts - 1;
      const delayMs = 3_600_000;
      await settleOne(
        ctx,
        requeue(second, { cause: "snooze", attempts: second.attempts - 1, delayMs, lastError: null }),
        "a give-back of the claim's attempt",
      );
      const row = await ctx.backend.jobs.get(first.id);
      assert.ok(row !== null, "the given-back job must still exist");
      equal(row.status, "queued", "the given-back job is queued");
      equal(
        row.attempts,
        before,
        "its attempts are the ones from before the claim (the claim's increment given back)",
      );
      equal(row.argsVersion, 4, "its argsVersion is untouched");
      equal(row.lastError, "Error: first run", "lastError null in the requeue keeps the stored last_error");
      equal(row.workerId, null, "the requeue clears worker_id");
      near(row.scheduledAt, Date.now() + delayMs, 60_000, "scheduledAt (due delayMs from now)");
      equal(
        (await ctx.backend.runs.claim({ queues: [queue], limit: 5, workerId: null })).jobs.length,
        0,
        "the given-back job is not due before delayMs",
      );
    },
  }),
  defineCase({
    id: "workers/task-versions",
    title:
      "registerTaskNames stores each task's version (null or a number) and listTaskNames returns it; registering a task again replaces its version",
    async run(ctx) {
      const register = async () => {
        const id = ctx.id();
        await ctx.backend.workers.register({
          id,
          hostname: "conformance",
          pid: 1,
          queues: [],
          concurrency: 1,
          version: null,
          metadata: null,
        });
        return id;
      };
      const a = await register();
      const b = await register();
      const rows = async (workerId: string) =>
        (await ctx.backend.workers.listTaskNames())
          .filter((t) => t.workerId === workerId)
          .map((t) => ({ taskName: t.taskName, version: t.version }));
      await ctx.backend.workers.registerTaskNames(a, [
        { name: "conformance.v", version: 2 },
        { name: "conformance.u", version: null },
      ]);
      await ctx.backend.workers.registerTaskNames(b, [{ name: "conformance.v", version: 5 }]);
      deepEqual(
        await rows(a),
        [
          { taskName: "conformance.u", version: null },
          { taskName: "conformance.v", version: 2 },
        ],
        "listTaskNames returns each task's version as registered (null stays null), ordered by task name",
      );
      deepEqual(
        await rows(b),
        [{ taskName: "conformance.v", version: 5 }],
        "another worker's row for the same task keeps its own version",
      );
      await ctx.backend.workers.registerTaskNames(a, [
        { name: "conformance.v", version: null },
        { name: "conformance.u", version: 3 },
      ]);
      deepEqual(
        await rows(a),
        [
          { taskName: "conformance.u", version: 3 },
          { taskName: "conformance.v", version: null },
        ],
        "registering a task again replaces its version (a number over null and null over a number), one row per task",
      );
      deepEqual(
        await rows(b),
        [{ taskName: "conformance.v", version: 5 }],
        "one worker registering again leaves another's version alone",
      );
    },
  }),
];
