/**
 * The queues facet: pause/resume/configure with their audit rows, `list()`, and the claim honouring the
 * controls (pause, concurrency, groupConcurrency, rate limit, the request's `limitedMax`), reporting a short
 * claim that a limit cut (`capped`, with when a full rate window opens) apart from a drained queue.
 */
import {
  auditRecord,
  type ClaimResult,
  EXACT_COUNTS_UP_TO,
  type QueueConfigPatch,
} from "@soniq/core/backend";
import { defineCase } from "../define-case.js";
import type { CaseContext } from "../types.js";
import { deepEqual, done, enqueue, equal, ids, settleOne } from "./helpers.js";

const claimResult = (ctx: CaseContext, queue: string, limit: number) =>
  ctx.backend.runs.claim({ queues: [queue], limit, workerId: null });

const claim = async (ctx: CaseContext, queue: string, limit: number) =>
  (await claimResult(ctx, queue, limit)).jobs;

/** Asserts `capped`: `"capacity"` (set, no rate window), `"rate"` (set, the window opens within `perMs`), or null. */
function expectCap(result: ClaimResult, expected: "capacity" | "rate" | null, what: string, perMs = 0): void {
  const { capped } = result;
  if (expected === null) {
    equal(capped, null, `${what}: nothing held back, so capped must be null`);
    return;
  }
  equal(capped !== null, true, `${what}: a limit held due jobs back, so capped must be set (got null)`);
  if (expected === "capacity") {
    equal(
      capped?.retryInMs,
      null,
      `${what}: capacity held them back, not a rate window: retryInMs must be null`,
    );
    return;
  }
  const ms = capped?.retryInMs;
  equal(
    typeof ms === "number" && ms >= 1 && ms <= perMs,
    true,
    `${what}: the rate window is full, so retryInMs must say when it opens (1..${perMs} ms), got ${ms}`,
  );
}

const pause = (ctx: CaseContext, queue: string) =>
  ctx.backend.queues.pause(queue, auditRecord("queue.pause", "kit", queue, null));

const configure = (ctx: CaseContext, queue: string, patch: QueueConfigPatch) =>
  ctx.backend.queues.configure(queue, patch, auditRecord("queue.configure", "kit", queue, { ...patch }));

export const queueCases = [
  defineCase({
    id: "queues/pause-blocks-claims",
    title:
      "a paused queue is never claimed from (also by a claim of every queue); resume lets claims take it",
    async run(ctx) {
      const queue = ctx.queue("paused");
      const other = ctx.queue("open");
      const job = await enqueue(ctx, { queue });
      const free = await enqueue(ctx, { queue: other });
      const settings = await pause(ctx, queue);
      equal(settings.paused, true, "queues.pause must return the settings with paused: true");
      const none = await claimResult(ctx, queue, 5);
      deepEqual(none.jobs, [], "claiming from a paused queue must return nothing");
      expectCap(none, null, "a paused queue is not a limit");
      const some = await ctx.backend.runs.claim({ queues: [queue, other], limit: 5, workerId: null });
      deepEqual(ids(some.jobs), [free.id], "a claim of several queues must skip the paused one");
      const all = await ctx.backend.runs.claim({ queues: null, limit: 1000, workerId: null });
      equal(
        ids(all.jobs).includes(job.id),
        false,
        "a claim of every queue must skip the paused queue's jobs",
      );
      const resumed = await ctx.backend.queues.resume(queue, auditRecord("queue.resume", "kit", queue, null));
      equal(resumed.paused, false, "queues.resume must return the settings with paused: false");
      deepEqual(ids(await claim(ctx, queue, 5)), [job.id], "after resume the queue's job must be claimed");
    },
  }),
  defineCase({
    id: "queues/configure-merges-and-clears",
    title:
      "configure merges: an omitted key keeps its value, null clears it; get reads a queue without a row as unlimited",
    async run(ctx) {
      const queue = ctx.queue("cfg");
      const fresh = await ctx.backend.queues.get(queue);
      deepEqual(
        [fresh.paused, fresh.concurrency, fresh.groupConcurrency, fresh.rateLimit],
        [false, null, null, null],
        "a queue without settings must read as unpaused and unlimited",
      );
      await configure(ctx, queue, { concurrency: 5, rateLimit: { max: 10, perMs: 1000 } });
      const merged = await configure(ctx, queue, { groupConcurrency: 2 });
      deepEqual(
        [merged.concurrency, merged.groupConcurrency, merged.rateLimit],
        [5, 2, { max: 10, perMs: 1000 }],
        "configure must keep the keys it was not given",
      );
      const cleared = await configure(ctx, queue, { concurrency: null, rateLimit: null });
      deepEqual(
        [cleared.concurrency, cleared.groupConcurrency, cleared.rateLimit],
        [null, 2, null],
        "configure must clear the keys given as null",
      );
      deepEqual(await ctx.backend.queues.get(queue), cleared, "queues.get must read what configure stored");
    },
  }),
  defineCase({
    id: "queues/actions-write-audit-rows",
    title: "pause, resume and configure each write the audit record they are given, listed newest first",
    async run(ctx) {
      const queue = ctx.queue("audited");
      const records = [
        auditRecord("queue.pause", `kit-${queue}`, queue, null),
        auditRecord("queue.configure", `kit-${queue}`, queue, { concurrency: 3 }),
        auditRecord("queue.resume", `kit-${queue}`, queue, null),
      ];
      await ctx.backend.queues.pause(queue, records[0] as never);
      await ctx.backend.queues.configure(queue, { concurrency: 3 }, records[1] as never);
      await ctx.backend.queues.resume(queue, records[2] as never);
      const rows = (await ctx.backend.audit.list({ action: null, since: null, limit: 1000 })).filter(
        (r) => r.actor === `kit-${queue}`,
      );
      deepEqual(
        rows.map((r) => [r.id, r.action, r.target, r.params, r.outcome]),
        [...records].reverse().map((r) => [r.id, r.action, r.target, r.params, r.outcome]),
        "audit.list must return the three rows, newest first, as written",
      );
      equal(
        rows.every((r) => r.at instanceof Date),
        true,
        "audit rows must carry `at` as a Date",
      );
      const configures = await ctx.backend.audit.list({
        action: "queue.configure",
        since: null,
        limit: 1000,
      });
      equal(
        configures.some((r) => r.id === records[1]?.id) &&
          configures.every((r) => r.action === "queue.configure"),
        true,
        "audit.list({ action }) must return only that action",
      );
      const future = await ctx.backend.audit.list({
        action: null,
        since: new Date(Date.now() + 3_600_000),
        limit: 10,
      });
      deepEqual(future, [], "audit.list({ since }) must drop older rows");
    },
  }),
  defineCase({
    id: "queues/concurrency-caps-processing",
    title: "concurrency caps the jobs processing in the queue: a claim takes only the free slots",
    async run(ctx) {
      const queue = ctx.queue("conc");
      for (let i = 0; i < 5; i++) await enqueue(ctx, { queue });
      await configure(ctx, queue, { concurrency: 2 });
      const first = await claimResult(ctx, queue, 5);
      equal(first.jobs.length, 2, "with concurrency 2, a claim of 5 must take 2");
      expectCap(first, "capacity", "concurrency 2 left 3 due jobs");
      const full = await claimResult(ctx, queue, 5);
      equal(full.jobs.length, 0, "with 2 processing, no slot is free");
      expectCap(full, "capacity", "a full queue with 3 due jobs");
      await settleOne(ctx, done(first.jobs[0] as { id: string; attempts: number }), "finishing a job");
      equal((await claim(ctx, queue, 5)).length, 1, "a finished job frees one slot");
      await configure(ctx, queue, { concurrency: null });
      const rest = await claimResult(ctx, queue, 5);
      equal(rest.jobs.length, 2, "clearing concurrency frees the queue");
      expectCap(rest, null, "the queue is drained");
    },
  }),
  defineCase({
    id: "queues/group-concurrency-caps-each-group",
    title: "groupConcurrency caps processing jobs per group; jobs without a group and other groups still run",
    async run(ctx) {
      const queue = ctx.queue("groups");
      const a: { id: string }[] = [];
      for (let i = 0; i < 3; i++) a.push(await enqueue(ctx, { queue, group: "a", priority: 1 }));
      const b = await enqueue(ctx, { queue, group: "b", priority: 2 });
      const none = await enqueue(ctx, { queue, priority: 3 });
      await configure(ctx, queue, { groupConcurrency: 1 });
      const first = await claimResult(ctx, queue, 10);
      const claimed = first.jobs;
      deepEqual(
        ids(claimed).sort(),
        [a[0]?.id, b.id, none.id].sort(),
        "one job of group a, the job of group b and the ungrouped job must be claimed",
      );
      expectCap(first, "capacity", "group a's cap left 2 of its jobs");
      equal(claimed.find((j) => j.id === b.id)?.group, "b", "the claimed job must expose its group");
      const full = await claimResult(ctx, queue, 10);
      deepEqual(full.jobs, [], "group a is full: nothing more to claim");
      expectCap(full, "capacity", "a full group with due jobs");
      await settleOne(
        ctx,
        done(claimed.find((j) => j.id === a[0]?.id) as { id: string; attempts: number }),
        "finishing the group-a job",
      );
      deepEqual(
        ids(await claim(ctx, queue, 10)),
        [a[1]?.id],
        "a finished group-a job lets the next one start",
      );
    },
  }),
  defineCase({
    id: "queues/rate-limit-caps-starts",
    title: "rateLimit caps starts in the window, counting finished jobs too",
    async run(ctx) {
      const queue = ctx.queue("rate");
      for (let i = 0; i < 5; i++) await enqueue(ctx, { queue });
      const hour = 3_600_000;
      await configure(ctx, queue, { rateLimit: { max: 2, perMs: hour } });
      const first = await claimResult(ctx, queue, 5);
      equal(first.jobs.length, 2, "with max 2 per hour, a claim of 5 must take 2");
      expectCap(first, "rate", "the claim filled the window with 3 jobs due", hour);
      for (const job of first.jobs) await settleOne(ctx, done(job), "finishing a job");
      const full = await claimResult(ctx, queue, 5);
      deepEqual(full.jobs, [], "finished jobs still count as starts in the window");
      expectCap(full, "rate", "a full window with 3 jobs due", hour);
      await configure(ctx, queue, { rateLimit: { max: 3, perMs: hour } });
      equal((await claim(ctx, queue, 5)).length, 1, "raising max to 3 allows one more start");
    },
  }),
  defineCase({
    id: "queues/limited-max-caps-limited-queues",
    title:
      "limitedMax caps what a claim takes from limited queues in all (unlimited ones fill the rest); a short claim says whether a limit held due jobs back",
    async run(ctx) {
      const limited = ctx.queue("lmax");
      const open = ctx.queue("lmax_open");
      for (let i = 0; i < 4; i++) await enqueue(ctx, { queue: limited, priority: 1 });
      for (let i = 0; i < 3; i++) await enqueue(ctx, { queue: open, priority: 2 });
      await configure(ctx, limited, { concurrency: 10 });
      // A settings row without limits (one cleared) leaves the queue unlimited.
      await configure(ctx, open, { rateLimit: { max: 5, perMs: 1000 } });
      await configure(ctx, open, { rateLimit: null });
      const both = (limitedMax: number) =>
        ctx.backend.runs.claim({ queues: [limited, open], limit: 10, workerId: null, limitedMax });
      const first = await both(1);
      deepEqual(
        first.jobs.map((j) => j.queue).sort(),
        [limited, open, open, open].sort(),
        "with limitedMax 1, one job of the limited queue and every job of the unlimited one must be claimed",
      );
      expectCap(first, "capacity", "limitedMax left 3 due jobs of the limited queue");
      const none = await both(0);
      deepEqual(none.jobs, [], "with limitedMax 0 and the unlimited queue drained, nothing is claimed");
      expectCap(none, "capacity", "limitedMax 0 with 3 due jobs in a limited queue");
      const rest = await ctx.backend.runs.claim({ queues: [limited, open], limit: 10, workerId: null });
      equal(rest.jobs.length, 3, "without limitedMax, the limited queue gives its 3 remaining jobs");
      expectCap(rest, null, "both queues are drained");
      expectCap(await claimResult(ctx, open, 5), null, "an unlimited queue's short claim is never capped");
    },
  }),
  defineCase({
    id: "queues/list",
    title: "queues.list lists every queue with jobs, dead letters or settings, with controls, stats and lag",
    async run(ctx) {
      const withJobs = ctx.queue("jobs");
      const withSettings = ctx.queue("settings");
      await enqueue(ctx, { queue: withJobs, scheduledAt: new Date(Date.now() - 60_000) });
      await enqueue(ctx, { queue: withJobs, scheduledAt: new Date(Date.now() + 3_600_000) });
      await configure(ctx, withSettings, { concurrency: 4 });
      const list = await ctx.backend.queues.list({ exactCountsUpTo: EXACT_COUNTS_UP_TO });
      const jobs = list.find((q) => q.name === withJobs);
      const settings = list.find((q) => q.name === withSettings);
      equal(jobs?.stats.queued, 2, "the queue with jobs must be listed with its stats");
      equal(jobs?.paused, false, "a queue without settings lists as unpaused");
      equal(
        jobs !== undefined && jobs.lagMs !== null && jobs.lagMs >= 59_000 && jobs.lagMs < 120_000,
        true,
        `lagMs must be the age of the oldest due job (~60 s), got ${jobs?.lagMs}`,
      );
      deepEqual(
        settings && [settings.concurrency, settings.lagMs, settings.stats.total],
        [4, null, 0],
        "a queue with only settings must be listed, with lagMs null",
      );
    },
  }),
  defineCase({
    id: "metrics/record-adds-list-prune",
    title:
      "metrics.record adds to a (minute, queue, job name) row in one call; list filters by since and queue; prune drops old minutes",
    async run(ctx) {
      const queue = ctx.queue("metrics");
      const other = ctx.queue("metrics_other");
      const minute = Math.floor(Date.now() / 60_000) * 60_000;
      const row = (at: number, q: string, done: number) => ({
        bucketStart: new Date(at),
        queue: q,
        jobName: "kit.job",
        done,
        failed: 1,
        retried: 0,
        deadLettered: 0,
        snoozed: 0,
        runMsSum: 2.5,
      });
      const old = minute - 30 * 24 * 3_600_000;
      await ctx.backend.metrics.record([row(minute, queue, 2), row(minute, other, 5), row(old, queue, 1)]);
      await ctx.backend.metrics.record([row(minute, queue, 3)]);
      const recent = await ctx.backend.metrics.list({ since: new Date(minute - 60_000), queue });
      deepEqual(
        recent.map((r) => [r.bucketStart.getTime(), r.queue, r.done, r.failed, r.runMsSum]),
        [[minute, queue, 5, 2, 5]],
        "record must add counts into the existing row; list must filter by since and queue",
      );
      const pruned = await ctx.backend.metrics.prune(14 * 24 * 3_600_000);
      equal(pruned >= 1, true, "prune must delete the 30-day-old row");
      const all = await ctx.backend.metrics.list({ since: new Date(old - 1), queue });
      deepEqual(
        all.map((r) => r.bucketStart.getTime()),
        [minute],
        "only the recent row of the queue is left",
      );
    },
  }),
] as const;
