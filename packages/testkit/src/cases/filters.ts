/**
 * The text search (`q`) and id set (`ids`) of `jobs.list` and `deadLetters.list`, and of the match a bulk
 * replay or purge walks (`deadLetters.count`, pages from a position). `q` is a case-insensitive substring of
 * the id, the job name or the last error (never the args), every character literal; `ids` is exactly those
 * rows, none for an empty list. Decoy queues hold rows matching the same text and ids, so a backend that
 * drops the other filters is caught.
 */
import { type DeadLetterJob, deadLetterMatch, type Job, type NewJob } from "@soniq/core/backend";
import { defineCase } from "../define-case.js";
import type { CaseContext } from "../types.js";
import {
  deadLettered,
  deepEqual,
  enqueue,
  equal,
  ids,
  listDeadLetters,
  listJobs,
  processingJob,
  requeue,
  settleOne,
  sorted,
} from "./helpers.js";

/** The rows a search runs over: which one each piece of text sits in. */
interface Searchable {
  /** `needle` in the job name. */
  byName: string;
  /** `NeedLe` in the last error. */
  byError: string;
  /** `needle` in the args only: never a match. */
  byArgs: string;
  /** No needle anywhere. */
  plain: string;
  /** `a_b` and `axb` in names: `_` is literal, so only the first matches "a_b". */
  underscore: string;
  lookalikeUnderscore: string;
  /** `50% off` and `50 off` in errors: `%` is literal, so only the first matches "50%". */
  percent: string;
  lookalikePercent: string;
}

/** The rows of `Searchable`, their last error made by `withError` (a requeue or a move to the dead letters). */
async function searchable(
  _ctx: CaseContext,
  queue: string,
  withError: (overrides: Partial<NewJob>, error: string) => Promise<string>,
  plain: (overrides: Partial<NewJob>) => Promise<string>,
): Promise<Searchable> {
  // Rows with an error first: each is claimed as the only due job of its queue.
  const byError = await withError({ queue, jobName: "conformance.other" }, "Upstream NeedLe timed out");
  const percent = await withError({ queue, jobName: "conformance.other" }, "discount 50% off");
  const lookalikePercent = await withError({ queue, jobName: "conformance.other" }, "discount 50 off");
  return {
    byError,
    percent,
    lookalikePercent,
    byName: await plain({ queue, jobName: "conformance.search_needle" }),
    byArgs: await plain({ queue, jobName: "conformance.other", args: { note: "needle" } }),
    plain: await plain({ queue, jobName: "conformance.other", args: { note: "hay" } }),
    underscore: await plain({ queue, jobName: "conformance.a_b" }),
    lookalikeUnderscore: await plain({ queue, jobName: "conformance.axb" }),
  };
}

/** A queued job whose last error is `error` (claimed, then requeued an hour out so it is not claimed again). */
async function jobWithError(ctx: CaseContext, overrides: Partial<NewJob>, error: string): Promise<string> {
  const job = await processingJob(ctx, overrides);
  await settleOne(
    ctx,
    requeue(job, { lastError: error, delayMs: 3_600_000 }),
    "requeueing a job with a last error",
  );
  return job.id;
}

async function plainJob(ctx: CaseContext, overrides: Partial<NewJob>): Promise<string> {
  return (await enqueue(ctx, overrides)).id;
}

async function deadWithError(ctx: CaseContext, overrides: Partial<NewJob>, error: string): Promise<string> {
  return (await deadLettered(ctx, overrides, { error })).id;
}

async function plainDead(ctx: CaseContext, overrides: Partial<NewJob>): Promise<string> {
  return (await deadLettered(ctx, overrides)).id;
}

/** The search assertions, for either list (`list` answers the ids of a filtered page). */
async function assertSearch(
  what: string,
  rows: Searchable,
  list: (filter: { q?: string; jobName?: string; limit?: number; after?: string }) => Promise<string[]>,
): Promise<void> {
  deepEqual(
    sorted(await list({ q: "NEEDLE" })),
    sorted([rows.byName, rows.byError]),
    `${what}({ queue, q: "NEEDLE" }) must answer the row with "needle" in its job name and the one with "NeedLe" in its last error (case-insensitive), not the row with it in its args only, and no row of another queue`,
  );
  deepEqual(
    await list({ q: rows.plain.slice(-12).toUpperCase() }),
    [rows.plain],
    `${what}({ q: <the last 12 hex digits of an id, upper-case> }) must answer that row: q matches the id, ignoring case`,
  );
  deepEqual(
    await list({ q: rows.plain.toUpperCase() }),
    [rows.plain],
    `${what}({ q: <a whole id, upper-case> }) must answer that row`,
  );
  deepEqual(
    await list({ q: "a_b" }),
    [rows.underscore],
    `${what}({ q: "a_b" }) must answer only the job named conformance.a_b: "_" in q is a literal character, not a LIKE wildcard (conformance.axb must not match)`,
  );
  deepEqual(
    await list({ q: "50%" }),
    [rows.percent],
    `${what}({ q: "50%" }) must answer only the row whose error says "50% off": "%" in q is literal, not a LIKE wildcard ("50 off" must not match)`,
  );
  deepEqual(
    await list({ q: "no row holds this text" }),
    [],
    `${what}({ q }) with text no row holds is empty`,
  );
  deepEqual(
    await list({ q: "needle", jobName: "conformance.other" }),
    [rows.byError],
    `${what}({ queue, jobName, q }) must apply the job name filter with the search`,
  );
  const all = await list({ q: "conformance" });
  equal(all.length, 8, `${what}({ q: "conformance" }): every job name holds it, so all 8 rows of the queue`);
  const walked: string[] = [];
  let after: string | undefined;
  for (let i = 0; i < 10; i++) {
    const page = await list({ q: "conformance", limit: 3, ...(after ? { after } : {}) });
    walked.push(...page);
    if (page.length < 3) break;
    after = page[page.length - 1];
  }
  deepEqual(
    walked,
    all,
    `${what}({ q, limit: 3, after }) pages must walk the search's rows once each, in list order`,
  );
}

/** Five rows of `queue` and two of a decoy queue, made by `make`. */
async function rowsAndDecoys(
  ctx: CaseContext,
  make: (overrides: Partial<NewJob>) => Promise<string>,
): Promise<{ queue: string; mine: string[]; decoys: string[] }> {
  const queue = ctx.queue();
  const decoyQueue = ctx.queue("decoys");
  const mine: string[] = [];
  const decoys: string[] = [];
  for (let i = 0; i < 5; i++) mine.push(await make({ queue, jobName: "conformance.ids" }));
  for (let i = 0; i < 2; i++) decoys.push(await make({ queue: decoyQueue, jobName: "conformance.ids" }));
  return { queue, mine, decoys };
}

export const filterCases = [
  defineCase({
    id: "jobs/filter-q",
    title:
      "jobs.list({ q }) answers the jobs whose id, job name or last error contains q, ignoring case (not the args); % and _ are literal; q combines with the other filters and keyset pages",
    async run(ctx) {
      const queue = ctx.queue();
      const make = (q: string) =>
        searchable(
          ctx,
          q,
          (o, e) => jobWithError(ctx, o, e),
          (o) => plainJob(ctx, o),
        );
      // Decoys older and newer than the queue's rows (their own queues: each claims its only due job).
      await make(ctx.queue("older_decoys"));
      const rows = await make(queue);
      await make(ctx.queue("newer_decoys"));
      const byId = new Map<string, Job>();
      await assertSearch("jobs.list", rows, async ({ after, ...filter }) => {
        const page = await listJobs(ctx, {
          queue,
          ...filter,
          ...(after ? { after: byId.get(after) as Job } : {}),
        });
        for (const job of page) byId.set(job.id, job);
        return ids(page);
      });
    },
  }),
  defineCase({
    id: "dlq/filter-q",
    title:
      "deadLetters.list({ q }) and deadLetters.count answer the rows whose id, job name or last error contains q, ignoring case (not the args); % and _ are literal; q combines with the other filters and keyset pages",
    async run(ctx) {
      const queue = ctx.queue();
      const make = (q: string) =>
        searchable(
          ctx,
          q,
          (o, e) => deadWithError(ctx, o, e),
          (o) => plainDead(ctx, o),
        );
      await make(ctx.queue("older_decoys"));
      const rows = await make(queue);
      await make(ctx.queue("newer_decoys"));
      const byId = new Map<string, DeadLetterJob>();
      await assertSearch("deadLetters.list", rows, async ({ after, ...filter }) => {
        const page = await listDeadLetters(ctx, {
          queue,
          ...filter,
          ...(after ? { after: byId.get(after) as DeadLetterJob } : {}),
        });
        for (const row of page) byId.set(row.id, row);
        return ids(page);
      });
      equal(
        await ctx.backend.deadLetters.count(deadLetterMatch({ queue, q: "NEEDLE" }, "deadLetters.count")),
        2,
        'deadLetters.count({ queue, q: "NEEDLE" }) counts what list answers (a bulk dry run reports it)',
      );
    },
  }),
  defineCase({
    id: "jobs/filter-ids",
    title:
      "jobs.list({ ids }) answers exactly the stored jobs with those ids (none for an empty list), with the other filters and keyset pages",
    async run(ctx) {
      const { queue, mine, decoys } = await rowsAndDecoys(ctx, (o) => plainJob(ctx, o));
      const [a, b, c, d] = mine as [string, string, string, string];
      const [decoy] = decoys as [string];
      const missing = ctx.id();
      deepEqual(
        sorted(ids(await listJobs(ctx, { ids: [a, c, decoy, missing] }))),
        sorted([a, c, decoy]),
        "jobs.list({ ids }) must answer exactly the stored jobs with those ids, of any queue (an unknown id is no row)",
      );
      deepEqual(ids(await listJobs(ctx, { ids: [] })), [], "jobs.list({ ids: [] }) must answer no job");
      deepEqual(
        ids(await listJobs(ctx, { queue, ids: [a, decoy] })),
        [a],
        "jobs.list({ queue, ids }) must apply the queue filter with the ids",
      );
      deepEqual(
        ids(await listJobs(ctx, { ids: [b], status: "done" })),
        [],
        "jobs.list({ ids, status }) must apply the status filter with the ids",
      );
      deepEqual(
        ids(await listJobs(ctx, { ids: [a.toUpperCase()] })),
        [a],
        "an id in upper case names the same job (core lower-cases it)",
      );
      const four = await listJobs(ctx, { ids: [a, b, c, d] });
      const page1 = await listJobs(ctx, { ids: [a, b, c, d], limit: 2 });
      const page2 = await listJobs(ctx, { ids: [a, b, c, d], limit: 2, after: page1[1] as Job });
      deepEqual(
        [...ids(page1), ...ids(page2)],
        ids(four),
        "jobs.list({ ids, limit: 2, after }) pages must walk those jobs once each, in list order",
      );
    },
  }),
  defineCase({
    id: "dlq/filter-ids-and-bulk-match",
    title:
      "deadLetters.list/count({ ids }) answer exactly those rows (none for an empty list); a bulk walk by ids (pages from a position, purging as it goes) acts on those rows only",
    async run(ctx) {
      const { queue, mine, decoys } = await rowsAndDecoys(ctx, (o) => plainDead(ctx, o));
      const [a, b, c, d, e] = mine as [string, string, string, string, string];
      const [decoy] = decoys as [string];
      const count = (filter: Parameters<typeof deadLetterMatch>[0]) =>
        ctx.backend.deadLetters.count(deadLetterMatch(filter, "deadLetters.count"));
      deepEqual(
        sorted(ids(await listDeadLetters(ctx, { ids: [a, c, decoy, ctx.id()] }))),
        sorted([a, c, decoy]),
        "deadLetters.list({ ids }) must answer exactly the rows with those ids, of any queue (an unknown id is no row)",
      );
      deepEqual(
        ids(await listDeadLetters(ctx, { ids: [] })),
        [],
        "deadLetters.list({ ids: [] }) must answer no row",
      );
      equal(
        await count({ ids: [] }),
        0,
        "deadLetters.count({ ids: [] }) must be 0: an empty id list matches nothing",
      );
      equal(await count({ ids: [a, b, decoy] }), 3, "deadLetters.count({ ids }) counts exactly those rows");
      equal(
        await count({ queue, ids: [a, b, decoy] }),
        2,
        "deadLetters.count({ queue, ids }) must apply the queue filter with the ids",
      );
      // What a bulk purge by ids does (core's walk): pages of 2 from a position, acting on each row.
      const chosen = [b, c, e, decoy];
      const acted: string[] = [];
      let after: DeadLetterJob | undefined;
      for (let i = 0; i < 10; i++) {
        const page = await listDeadLetters(ctx, { ids: chosen, limit: 2, ...(after ? { after } : {}) });
        for (const row of page) {
          equal(await ctx.backend.deadLetters.purge(row.id), true, `purging ${row.id}, a row the walk found`);
          acted.push(row.id);
        }
        if (page.length < 2) break;
        after = page[page.length - 1];
      }
      deepEqual(sorted(acted), sorted(chosen), "a bulk walk by ids must reach every chosen row once");
      deepEqual(
        sorted(ids(await listDeadLetters(ctx, { ids: [...mine, ...decoys] }))),
        sorted([a, d, ...decoys.filter((id) => id !== decoy)]),
        "the rows not chosen must all remain after a bulk walk by ids",
      );
    },
  }),
];
