/**
 * Keyset paging (`position` in `jobs.list` / `deadLetters.list`), the dead-letter count, and what
 * `queues.list` may estimate. Jobs list by id alone (UUIDv7, time-ordered), dead letters by their instant
 * then id. Rows made in one call share their instant on most backends, so the dead letters' id tie-break is
 * exercised, and decoys in another queue hold rows at the same instants.
 */
import { type DeadLetterJob, deadLetterMatch, type Job } from "@soniq/core/backend";
import { defineCase } from "../define-case.js";
import { delay } from "../eventually.js";
import type { CaseContext } from "../types.js";
import {
  claimAll,
  deadLetter,
  deepEqual,
  done,
  enqueue,
  equal,
  ids,
  listDeadLetters,
  listJobs,
  settleOne,
} from "./helpers.js";

type Row = { id: string; at: number };

/** The dead letters' order: the instant (whole ms) descending, then id descending. */
function newestFirst(rows: readonly Row[]): string[] {
  return [...rows].sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)).map((r) => r.id);
}

/** The jobs' order: id descending (ids are time-ordered). */
function byIdDescending(jobs: readonly Job[]): string[] {
  return ids(jobs).sort((a, b) => (a < b ? 1 : a > b ? -1 : 0));
}

/** An id just below `id` in id order that no stored job has (its last hex digit lowered, or 0 raised to 1). */
function idNextTo(id: string): string {
  const last = id.slice(-1);
  return id.slice(0, -1) + (last === "0" ? "1" : (Number.parseInt(last, 16) - 1).toString(16));
}

/** A walk from a position must keep the filter: no row outside `all` (the filter's rows). */
function onlyFiltered(walked: readonly string[], all: readonly { id: string }[], what: string): void {
  const wanted = new Set(ids(all));
  deepEqual(
    walked.filter((id) => !wanted.has(id)),
    [],
    `${what}: pages after a position returned rows of another queue (older than the position). The keyset ` +
      "condition must be added to the filter, not replace it; a bulk replay or purge by filter walks these pages",
  );
}

const deadRow = (d: DeadLetterJob): Row => ({ id: d.id, at: d.movedToDeadLetterAt.getTime() });

/** Walk every page of `limit` rows with `after` (the last row of each page), collecting ids. */
async function walkOlder<T extends { id: string }>(
  page: (after: T | undefined) => Promise<T[]>,
  limit: number,
  what: string,
): Promise<string[]> {
  const seen: string[] = [];
  let last: T | undefined;
  for (let i = 0; i < 100; i++) {
    const rows = await page(last);
    seen.push(...ids(rows));
    if (rows.length < limit) return seen;
    last = rows[rows.length - 1];
  }
  throw new Error(
    `${what}: pages of ${limit} with after never reached the end: after must continue after the row it names`,
  );
}

/** A queue of 15 jobs: 3 alone (a few ms apart) and 12 enqueued in one call (sharing an instant or nearly). */
async function jobsWithTies(ctx: CaseContext, queue: string): Promise<void> {
  for (let i = 0; i < 3; i++) {
    await enqueue(ctx, { queue, jobName: "conformance.single" });
    await delay(3);
  }
  const batch = Array.from({ length: 12 }, () => ctx.newJob({ queue, jobName: "conformance.batch" }));
  await ctx.backend.jobs.enqueueMany(batch, {});
}

export const pagingCases = [
  defineCase({
    id: "jobs/keyset-pages",
    title:
      "jobs.list pages from a position: after walks every job once in id descending order (ids are time-ordered), comparing the position's id only; before answers the nearest newer jobs first, filters hold",
    async run(ctx) {
      const queue = ctx.queue();
      const decoys = ctx.queue("decoys");
      // Decoys older and newer than the queue's jobs: a page after a position that drops the filter meets them.
      await jobsWithTies(ctx, decoys);
      await jobsWithTies(ctx, queue);
      await jobsWithTies(ctx, decoys);
      const all = await listJobs(ctx, { queue });
      equal(all.length, 15, "the queue holds 15 jobs");
      deepEqual(ids(all), byIdDescending(all), "jobs.list orders by id desc");
      const walked = await walkOlder<Job>(
        (after) => listJobs(ctx, { queue, limit: 4, ...(after ? { after } : {}) }),
        4,
        "jobs.list",
      );
      onlyFiltered(walked, all, "jobs.list({ queue, after })");
      deepEqual(walked, ids(all), "pages of 4 with after: each job exactly once, in list order");
      const mid = all[7] as Job;
      deepEqual(
        ids(await listJobs(ctx, { queue, limit: 3, after: mid })),
        ids(all.slice(8, 11)),
        "after a job: the next jobs in list order",
      );
      deepEqual(
        ids(await listJobs(ctx, { queue, limit: 3, before: mid })),
        ids(all.slice(4, 7)).reverse(),
        "before a job: the backend answers the nearest newer jobs first (core reverses the page)",
      );
      deepEqual(
        ids(await listJobs(ctx, { queue, before: all[0] as Job })),
        [],
        "nothing is newer than the newest job",
      );
      // Next to the middle job in id order, with the newest job's createdAt: a backend comparing
      // (createdAt, id) would return nearly every job.
      const gone = { id: idNextTo(mid.id), createdAt: (all[0] as Job).createdAt };
      deepEqual(
        ids(await listJobs(ctx, { queue, after: gone })),
        ids(all.filter((j) => j.id < gone.id)),
        "a position need not name a stored row, and jobs compare its id only (not its createdAt)",
      );
      const batchOnly = await listJobs(ctx, {
        queue,
        jobName: "conformance.batch",
        limit: 5,
        after: all[2] as Job,
      });
      deepEqual(
        ids(batchOnly),
        ids(all.slice(3).filter((j) => j.jobName === "conformance.batch")).slice(0, 5),
        "a position combines with the filters (jobName)",
      );
      await enqueue(ctx, { queue });
      deepEqual(
        ids(await listJobs(ctx, { queue, limit: 4, after: all[3] as Job })),
        ids(all.slice(4, 8)),
        "a job enqueued meanwhile does not shift a page read from a position",
      );
    },
  }),
  defineCase({
    id: "dlq/keyset-pages-and-count",
    title:
      "deadLetters.list pages from a position by (movedToDeadLetterAt ms, id), comparing the pair; deadLetters.count counts the filter's rows",
    async run(ctx) {
      const queue = ctx.queue();
      const decoys = ctx.queue("decoys");
      // Decoys moved before and after the queue's rows: a page after a position that drops the queue filter
      // (as a bulk replay by filter walks them) meets the older ones.
      for (const q of [decoys, queue, decoys]) {
        for (let i = 0; i < 10; i++)
          await enqueue(ctx, { queue: q, jobName: i % 2 ? "conformance.odd" : "conformance.even" });
        const claimed = await claimAll(ctx, q, 10);
        // One settle call: the moves share an instant (or nearly) on most backends.
        deepEqual(
          await ctx.backend.runs.settle(claimed.map((j) => deadLetter(j))),
          claimed.map(() => true),
          "moving ten processing jobs to the dead-letter table in one settle call",
        );
      }
      const all = await listDeadLetters(ctx, { queue });
      equal(all.length, 10, "the queue holds 10 dead letters");
      deepEqual(
        ids(all),
        newestFirst(all.map(deadRow)),
        "deadLetters.list orders by movedToDeadLetterAt (ms) desc, then id desc",
      );
      const walked = await walkOlder<DeadLetterJob>(
        (after) => listDeadLetters(ctx, { queue, limit: 3, ...(after ? { after } : {}) }),
        3,
        "deadLetters.list",
      );
      onlyFiltered(walked, all, "deadLetters.list({ queue, after })");
      deepEqual(walked, ids(all), "pages of 3 with after: each row exactly once, in list order");
      deepEqual(
        ids(await listDeadLetters(ctx, { queue, limit: 2, before: all[5] as DeadLetterJob })),
        [all[4]?.id, all[3]?.id],
        "before a row: the nearest newer rows first",
      );
      const count = (filter: Parameters<typeof deadLetterMatch>[0]) =>
        ctx.backend.deadLetters.count(deadLetterMatch(filter, "deadLetters.count"));
      equal(await count({ queue }), 10, "count({ queue }) counts that queue's rows only");
      equal(
        await count({ queue, jobName: "conformance.odd" }),
        5,
        "count applies the jobName filter with the queue",
      );
      equal(await count({ queue, reason: "max_retries_exceeded" }), 0, "count applies the reason filter");
      const t = all[0]?.movedToDeadLetterAt as Date;
      equal(
        await count({ queue, since: t }),
        all.filter((d) => d.movedToDeadLetterAt.getTime() >= t.getTime()).length,
        "count({ since }) is inclusive, like list",
      );
      equal(
        await count({ queue, until: t }),
        all.filter((d) => d.movedToDeadLetterAt.getTime() < t.getTime()).length,
        "count({ until }) is exclusive, like list",
      );
      equal(await count({ queue: ctx.queue("empty") }), 0, "count of a queue without dead letters is 0");
    },
  }),
  defineCase({
    id: "queues/list-counts-exact-up-to-the-limit",
    title:
      "queues.list counts queued and processing exactly; done, cancelled and dead letters exactly up to exactCountsUpTo, above it an estimate (at least the limit + 1) named in estimated",
    async run(ctx) {
      const small = ctx.queue("small");
      const big = ctx.queue("big");
      for (const [queue, n] of [
        [small, 2],
        [big, 5],
      ] as const) {
        for (let i = 0; i < n; i++) await enqueue(ctx, { queue });
        const claimed = await claimAll(ctx, queue, n);
        for (const j of claimed) await settleOne(ctx, done(j), "completing a job");
        for (let i = 0; i < n + 1; i++) await enqueue(ctx, { queue });
      }
      const list = await ctx.backend.queues.list({ exactCountsUpTo: 2 });
      const of = (name: string) => list.find((q) => q.name === name);
      const s = of(small);
      deepEqual(
        s && [s.stats.done, s.stats.queued, s.estimated],
        [2, 3, []],
        "counts at the limit (2 done) are exact, and queued (3, above the limit) is always exact",
      );
      const b = of(big);
      equal(b?.stats.queued, 6, "queued is exact above the limit");
      const bigDone = b?.stats.done ?? 0;
      if (b?.estimated.includes("done")) {
        equal(
          bigDone >= 3,
          true,
          `an estimated done count must be at least exactCountsUpTo + 1 (3), got ${bigDone}`,
        );
      } else {
        equal(bigDone, 5, "a done count that is not named in estimated must be exact");
      }
      for (const q of list) {
        for (const k of q.estimated) {
          equal(
            q.stats[k] >= 3,
            true,
            `${q.name}: an estimated ${k} must be above the limit, got ${q.stats[k]}`,
          );
        }
        const sum =
          q.stats.queued + q.stats.processing + q.stats.done + q.stats.cancelled + q.stats.dead_letter;
        equal(q.stats.total, sum, `${q.name}: total must be the sum of the five counts`);
      }
      const exact = await ctx.backend.queues.list({ exactCountsUpTo: 1000 });
      deepEqual(
        exact.find((q) => q.name === big)?.estimated,
        [],
        "with a limit above every count, nothing is estimated",
      );
      equal(exact.find((q) => q.name === big)?.stats.done, 5, "and the counts are exact");
    },
  }),
];
