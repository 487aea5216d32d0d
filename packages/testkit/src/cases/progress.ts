import assert from "node:assert/strict";
import { defineCase } from "../define-case.js";
import { eventually } from "../eventually.js";
import {
  cancelForSetup,
  deadLetter,
  deepEqual,
  done,
  equal,
  processingJob,
  requeue,
  settleOne,
} from "./helpers.js";
import { reclaimedAfterLostClaim } from "./settle-fence.js";

/** `runs.reportProgress` (core calls it with the heartbeat) and the finished-job notifications `waitFor` hears. */
export const progressCases = [
  defineCase({
    id: "progress/report-fenced-by-attempt",
    title:
      "runs.reportProgress writes each run's value in one call, fenced by (id, attempt); jobs.get and jobs.list show it as progress",
    async run(ctx) {
      const a = await processingJob(ctx);
      const b = await processingJob(ctx);
      equal(a.progress, null, "a job that never reported has progress null");
      const written = await ctx.backend.runs.reportProgress([
        { id: a.id, attempt: a.attempts, value: 40 },
        { id: b.id, attempt: b.attempts, value: { step: "upload", done: 3, total: 7 } },
        { id: ctx.id(), attempt: 1, value: 1 },
      ]);
      equal(
        written,
        2,
        "reportProgress returns how many rows it wrote (two runs; the third id names no row)",
      );
      equal((await ctx.backend.jobs.get(a.id))?.progress, 40, "jobs.get shows a number as written");
      deepEqual(
        (await ctx.backend.jobs.get(b.id))?.progress,
        { step: "upload", done: 3, total: 7 },
        "jobs.get shows a JSON object as written",
      );
      const listed = await ctx.backend.jobs.list({
        statuses: ["processing"],
        queue: b.queue,
        jobName: null,
        q: null,
        ids: null,
        limit: 10,
        offset: 0,
        position: null,
      });
      deepEqual(listed[0]?.progress, { step: "upload", done: 3, total: 7 }, "jobs.list carries progress too");
      equal(
        await ctx.backend.runs.reportProgress([{ id: a.id, attempt: a.attempts + 1, value: 99 }]),
        0,
        "a value for another attempt of the job is not written",
      );
      equal((await ctx.backend.jobs.get(a.id))?.progress, 40, "the fenced-out write changed nothing");
    },
  }),
  defineCase({
    id: "progress/last-value-after-settle",
    title:
      "a run's last progress lands even after the run settled done (fenced by attempt, not status); a later attempt's claim returns the stored value",
    async run(ctx) {
      const job = await processingJob(ctx);
      await settleOne(ctx, done(job, "ok"), "settling the run done");
      equal(
        await ctx.backend.runs.reportProgress([{ id: job.id, attempt: job.attempts, value: 100 }]),
        1,
        "the final value of the run that just finished is written",
      );
      equal((await ctx.backend.jobs.get(job.id))?.progress, 100, "the done job shows its last progress");
      equal((await ctx.backend.jobs.get(job.id))?.status, "done", "writing progress leaves the status alone");

      const retried = await processingJob(ctx);
      await ctx.backend.runs.reportProgress([{ id: retried.id, attempt: retried.attempts, value: 0.5 }]);
      await settleOne(ctx, requeue(retried), "requeueing the run for a retry");
      const again = await ctx.backend.runs.claim({ queues: [retried.queue], limit: 1, workerId: null });
      equal(again.jobs[0]?.id, retried.id, "setup: the retried job is claimed again");
      equal(again.jobs[0]?.progress, 0.5, "the claim returns the progress the previous attempt left");
    },
  }),
  defineCase({
    id: "progress/late-value-of-a-lost-claim",
    title:
      "with the worker named, the progress of a run whose claim was lost is not written to the next claim at the same attempt; that claim's worker writes its own, after its done too",
    async run(ctx) {
      const { first, second, a, b } = await reclaimedAfterLostClaim(ctx);
      equal(
        await ctx.backend.runs.reportProgress([{ id: first.id, attempt: first.attempts, value: "A" }], a),
        0,
        `worker A's progress must not be written to worker B's claim, though both carry attempt ${first.attempts}`,
      );
      equal(
        (await ctx.backend.jobs.get(first.id))?.progress,
        null,
        "worker A's fenced-out value changed nothing",
      );
      equal(
        await ctx.backend.runs.reportProgress([{ id: second.id, attempt: second.attempts, value: "B" }], b),
        1,
        "worker B's progress, naming worker B, is written",
      );
      await settleOne(ctx, done(second, "second run"), "settling worker B's run done");
      equal(
        await ctx.backend.runs.reportProgress(
          [{ id: second.id, attempt: second.attempts, value: "B, last" }],
          b,
        ),
        1,
        "worker B's last value lands after its done (a done job keeps its worker)",
      );
      equal(
        await ctx.backend.runs.reportProgress(
          [{ id: first.id, attempt: first.attempts, value: "A, late" }],
          a,
        ),
        0,
        "worker A's value must not land on the done job either",
      );
      equal(
        (await ctx.backend.jobs.get(first.id))?.progress,
        "B, last",
        "the job shows worker B's last value",
      );
    },
  }),
  defineCase({
    id: "progress/null-clears",
    title: "reporting null stores SQL NULL: jobs.get shows progress null",
    async run(ctx) {
      const job = await processingJob(ctx);
      await ctx.backend.runs.reportProgress([{ id: job.id, attempt: job.attempts, value: "half" }]);
      equal((await ctx.backend.jobs.get(job.id))?.progress, "half", "a string value is stored");
      await ctx.backend.runs.reportProgress([{ id: job.id, attempt: job.attempts, value: null }]);
      equal((await ctx.backend.jobs.get(job.id))?.progress, null, "null clears it");
    },
  }),
  defineCase({
    id: "subscribe/hears-finished-jobs",
    title:
      "subscribeFinished hears the ids of jobs settled done or dead letter and of cancelled jobs, not of requeued ones",
    async run(ctx) {
      const heard = new Set<string>();
      const unsubscribe = await ctx.backend.wakeUps.subscribeFinished((ids) => {
        for (const id of ids) heard.add(id);
      });
      ctx.defer(unsubscribe);
      const retried = await processingJob(ctx);
      await settleOne(ctx, requeue(retried), "requeueing a run (not a finish)");
      const finished = await processingJob(ctx);
      const dead = await processingJob(ctx);
      const cancelled = await processingJob(ctx);
      const queued = await ctx.backend.jobs.enqueue(ctx.newJob(), {});
      deepEqual(
        await ctx.backend.runs.settle([done(finished, 1), deadLetter(dead)]),
        [true, true],
        "setup: one settle of a done and a dead-letter item",
      );
      await cancelForSetup(ctx, cancelled.id, "a processing job");
      await cancelForSetup(ctx, queued.id, "a queued job");
      const expected = [finished.id, dead.id, cancelled.id, queued.id];
      await eventually(
        () =>
          assert.ok(
            expected.every((id) => heard.has(id)),
            `finished ids not all heard yet: expected ${expected.join(", ")}, heard ${[...heard].join(", ") || "nothing"}`,
          ),
        { timeoutMs: 5000 },
      );
      // Notifications arrive in commit order: the requeue committed first, so it would have arrived by now.
      assert.ok(!heard.has(retried.id), "a requeued job did not finish: its id must not be announced");
    },
  }),
  defineCase({
    id: "subscribe/finished-many-in-one-settle",
    title: "a settle of 450 done items announces every id (payloads split under the notification size limit)",
    async run(ctx) {
      const heard = new Set<string>();
      const unsubscribe = await ctx.backend.wakeUps.subscribeFinished((ids) => {
        for (const id of ids) heard.add(id);
      });
      ctx.defer(unsubscribe);
      const queue = ctx.queue("many");
      const jobs = Array.from({ length: 450 }, () => ctx.newJob({ queue }));
      await ctx.backend.jobs.enqueueMany(jobs, {});
      const claimed = await ctx.backend.runs.claim({ queues: [queue], limit: 450, workerId: null });
      equal(claimed.jobs.length, 450, "setup: all 450 jobs claimed");
      const applied = await ctx.backend.runs.settle(claimed.jobs.map((j) => done(j, null, 0)));
      equal(applied.filter(Boolean).length, 450, "setup: all 450 settled done (rows deleted: ttl 0)");
      await eventually(
        () =>
          assert.ok(
            jobs.every((j) => heard.has(j.id)),
            `heard ${jobs.filter((j) => heard.has(j.id)).length} of 450 finished ids so far`,
          ),
        { timeoutMs: 5000 },
      );
    },
  }),
  defineCase({
    id: "subscribe/finished-from-peer",
    title: "a finish written through another instance on the same storage reaches this instance's subscriber",
    requires: { peer: true, capabilities: { notify: true } },
    async run(ctx) {
      const heard = new Set<string>();
      const unsubscribe = await ctx.backend.wakeUps.subscribeFinished((ids) => {
        for (const id of ids) heard.add(id);
      });
      ctx.defer(unsubscribe);
      const peer = await ctx.openPeer();
      const job = ctx.newJob();
      await peer.jobs.enqueue(job, {});
      equal(await peer.jobs.cancel(job.id), true, "setup: the peer cancels its queued job");
      await eventually(
        () => assert.ok(heard.has(job.id), `the peer's cancel of ${job.id} was not heard yet`),
        { timeoutMs: 5000 },
      );
    },
  }),
];
