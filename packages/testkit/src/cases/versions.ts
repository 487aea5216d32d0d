/**
 * Versions of a job's arguments (DESIGN.md section 20): every job and dead letter stores `args_version` as
 * given (null: unversioned), a worker older than a job gives it back without spending an attempt, and the task
 * registry stores the version each worker's handler takes. The `versions` capability finds the queued jobs and
 * dead letters older than a version and rewrites them, each row guarded (`soniq.jobs.upgrade`).
 */
import assert from "node:assert/strict";
import type { Job } from "@soniq/core/backend";
import { defineCase } from "../define-case.js";
import {
  claimAll,
  claimOne,
  deadLetter,
  deadLettered,
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

/** The rows `versions.list` returns, as [id, argsVersion, args]. */
const outdated = (rows: readonly { id: string; argsVersion: number; args: unknown }[]) =>
  rows.map((r) => [r.id, r.argsVersion, r.args]);

const byId = (ids: readonly string[]) => [...ids].sort();

export const upgradeCases = [
  defineCase({
    id: "versions/outdated-rows",
    title:
      "versions.count and versions.list find one job name's queued jobs and dead letters whose args_version is set and below the version, ascending by id, paged after an id; running, current, newer and unversioned rows are not among them",
    async run(ctx) {
      const queue = ctx.queue("outdated");
      const jobName = `conformance.${queue}`;
      const v1 = await enqueue(ctx, { queue, jobName, argsVersion: 1, args: { v: 1 } });
      const v2 = await enqueue(ctx, { queue, jobName, argsVersion: 2, args: { v: 2 } });
      await enqueue(ctx, { queue, jobName, argsVersion: 3 });
      await enqueue(ctx, { queue, jobName, argsVersion: 4 });
      await enqueue(ctx, { queue, jobName, argsVersion: null });
      await enqueue(ctx, { queue, jobName: `${jobName}_other`, argsVersion: 1 });
      await processingJob(ctx, { queue: ctx.queue("outdated_run"), jobName, argsVersion: 1 });
      const dead = await deadLettered(ctx, {
        queue: ctx.queue("outdated_dl"),
        jobName,
        argsVersion: 2,
        args: { d: 2 },
      });
      await deadLettered(ctx, { queue: ctx.queue("outdated_dl"), jobName, argsVersion: null });
      await deadLettered(ctx, { queue: ctx.queue("outdated_dl"), jobName, argsVersion: 3 });
      const jobs = { table: "jobs", jobName, below: 3 } as const;
      const deadLetters = { table: "deadLetters", jobName, below: 3 } as const;
      equal(
        await ctx.backend.versions.count(jobs),
        2,
        "versions.count(jobs): the two queued jobs below version 3",
      );
      equal(
        await ctx.backend.versions.count(deadLetters),
        1,
        "versions.count(deadLetters): the one dead letter below 3",
      );
      const [first, second] = byId([v1.id, v2.id]);
      const argsOf: Record<string, unknown> = { [v1.id]: { v: 1 }, [v2.id]: { v: 2 } };
      const versionOf: Record<string, number> = { [v1.id]: 1, [v2.id]: 2 };
      const row = (id = "") => [id, versionOf[id], argsOf[id]];
      deepEqual(
        outdated(await ctx.backend.versions.list({ ...jobs, afterId: null, limit: 10 })),
        [row(first), row(second)],
        "versions.list(jobs) returns the outdated queued jobs ascending by id, with their args and argsVersion",
      );
      deepEqual(
        outdated(await ctx.backend.versions.list({ ...jobs, afterId: null, limit: 1 })),
        [row(first)],
        "versions.list takes at most limit rows",
      );
      deepEqual(
        outdated(await ctx.backend.versions.list({ ...jobs, afterId: first ?? null, limit: 10 })),
        [row(second)],
        "versions.list with afterId returns the rows after that id",
      );
      deepEqual(
        outdated(await ctx.backend.versions.list({ ...deadLetters, afterId: null, limit: 10 })),
        [[dead.id, 2, { d: 2 }]],
        "versions.list(deadLetters) returns the outdated dead letter with its args and argsVersion",
      );
      equal(await ctx.backend.versions.count({ ...jobs, below: 1 }), 0, "nothing is below version 1");
    },
  }),
  defineCase({
    id: "versions/rewrite-guarded",
    title:
      "versions.rewrite sets args and args_version of each row still at the version it was read with (a job: still queued), leaves every other column (args_hash too), skips a changed, running or missing row, and returns how many it wrote",
    async run(ctx) {
      const queue = ctx.queue("rewrite");
      const jobName = `conformance.${queue}`;
      const unique = await enqueue(ctx, {
        queue,
        jobName,
        argsVersion: 1,
        unique: true,
        argsHash: "hash-v1",
      });
      const moved = await enqueue(ctx, { queue, jobName, argsVersion: 2 });
      const running = await processingJob(ctx, { queue: ctx.queue("rewrite_run"), jobName, argsVersion: 1 });
      const dead = await deadLettered(ctx, { queue: ctx.queue("rewrite_dl"), jobName, argsVersion: 1 });
      const before = await ctx.backend.jobs.get(unique.id);
      const written = await ctx.backend.versions.rewrite(
        "jobs",
        [
          { id: unique.id, fromVersion: 1, args: { up: true } },
          { id: moved.id, fromVersion: 1, args: { up: true } },
          { id: running.id, fromVersion: 1, args: { up: true } },
          { id: ctx.id(), fromVersion: 1, args: { up: true } },
        ],
        3,
      );
      equal(written, 1, "versions.rewrite(jobs) writes only the queued row still at its read version");
      const after = await ctx.backend.jobs.get(unique.id);
      deepEqual(after?.args, { up: true }, "the rewritten job's args are the new args");
      equal(after?.argsVersion, 3, "the rewritten job's argsVersion is the version given");
      deepEqual(
        [after?.status, after?.attempts, after?.argsHash, after?.queue, after?.scheduledAt.getTime()],
        [before?.status, before?.attempts, "hash-v1", before?.queue, before?.scheduledAt.getTime()],
        "a rewrite changes args and version only: status, attempts, args_hash, queue and due time stay",
      );
      equal(
        (await ctx.backend.jobs.get(moved.id))?.argsVersion,
        2,
        "a row whose version moved on is skipped",
      );
      const run = await ctx.backend.jobs.get(running.id);
      deepEqual(
        [run?.status, run?.argsVersion, run?.args],
        ["processing", 1, running.args],
        "a running job is not rewritten (its run upcasts it)",
      );
      equal(
        await ctx.backend.versions.rewrite("deadLetters", [{ id: dead.id, fromVersion: 1, args: ["dl"] }], 3),
        1,
        "versions.rewrite(deadLetters) writes the dead letter at its read version",
      );
      const letter = await ctx.backend.deadLetters.get(dead.id);
      deepEqual(
        [letter?.args, letter?.argsVersion],
        [["dl"], 3],
        "the dead letter's args and version are rewritten",
      );
      equal(
        await ctx.backend.versions.rewrite(
          "deadLetters",
          [{ id: dead.id, fromVersion: 1, args: ["again"] }],
          4,
        ),
        0,
        "a second rewrite read at the old version writes nothing",
      );
      equal(
        await ctx.backend.versions.count({ table: "jobs", jobName, below: 3 }),
        1,
        "after the rewrite, only the skipped version-2 job is still below version 3",
      );
    },
  }),
];
