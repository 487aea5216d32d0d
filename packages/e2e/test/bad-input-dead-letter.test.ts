/**
 * The bad-input catalogue (see bad-input-support.ts): `deadLetter.list`, `.export`, `.replay` and the bulk
 * operations by filter, `.replayWhere` and `.purgeWhere` (the fixture's one dead letter would be replayed or
 * purged by any bad call that got through).
 */
import { expect, it } from "vitest";
import { type Case, catalogue } from "./bad-input-support.js";

const BEFORE_YEAR_1 = new Date(Date.UTC(-10_000, 0, 1));
const AFTER_YEAR_9999 = new Date(Date.UTC(10_000, 0, 1));

const CASES: readonly Case[] = [
  [
    "deadLetter.list/since-string",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetter.list({ since: "yesterday" as never }),
  ],
  [
    "deadLetter.list/until-number",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetter.list({ until: 5 as never }),
  ],
  ["deadLetter.list/limit-0", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.deadLetter.list({ limit: 0 })],
  [
    "deadLetter.list/unknown-key",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetter.list({ name: "x" } as never),
  ],
  [
    "deadLetter.export/since-string",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetter.export({ since: "yesterday" as never }),
  ],
  [
    "deadLetter.replay/dedup-key",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetter.replay(f.deadId, { dedupKey: "x" } as never),
  ],
  [
    "deadLetter.replay/unique",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetter.replay(f.deadId, { unique: true } as never),
  ],
  [
    "deadLetter.replay/tx",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetter.replay(f.deadId, { tx: {} } as never),
  ],
  [
    "deadLetter.replay/options-number",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetter.replay(f.deadId, 5 as never),
  ],
  [
    "deadLetter.replay/run-at-and-delay",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetter.replay(f.deadId, { runAt: new Date(), delayMs: 5 }),
  ],
  [
    "deadLetter.replay/run-at-invalid",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetter.replay(f.deadId, { runAt: new Date("x") }),
  ],
  ["deadLetter.list/null", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.deadLetter.list(null as never)],
  [
    "deadLetter.list/since-invalid-date",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetter.list({ since: new Date("x") }),
  ],
  ["deadLetter.export/null", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.deadLetter.export(null as never)],
  [
    "deadLetter.replay/queue-empty",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetter.replay(f.deadId, { queue: "" }),
  ],
  [
    "deadLetter.replay/priority-fraction",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetter.replay(f.deadId, { priority: 1.5 }),
  ],
  [
    "deadLetter.list/job-name-nul",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetter.list({ jobName: "a\u0000" }),
  ],
  [
    "deadLetter.list/since-before-year-1",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetter.list({ since: BEFORE_YEAR_1 }),
  ],
  [
    "deadLetter.list/until-after-year-9999",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetter.list({ until: AFTER_YEAR_9999 }),
  ],
  [
    "deadLetter.export/reason-nul",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetter.export({ reason: "\u0000" }),
  ],
  [
    "deadLetter.export/destination-number",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetter.export({}, 5 as never),
  ],
  [
    "deadLetter.export/destination-without-once",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetter.export({}, { write: () => true } as never),
  ],
  // replayWhere(filter, options): the filter is deadLetter.list's without paging.
  ["replayWhere/filter-null", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.deadLetter.replayWhere(null as never)],
  [
    "replayWhere/filter-string",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetter.replayWhere("all" as never),
  ],
  [
    "replayWhere/filter-limit",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetter.replayWhere({ limit: 5 } as never),
  ],
  [
    "replayWhere/filter-offset",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetter.replayWhere({ offset: 0 } as never),
  ],
  [
    "replayWhere/filter-unknown-key",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetter.replayWhere({ name: "bad.dead" } as never),
  ],
  [
    "replayWhere/filter-since-string",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetter.replayWhere({ since: "yesterday" as never }),
  ],
  [
    "replayWhere/filter-since-before-year-1",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetter.replayWhere({ since: BEFORE_YEAR_1 }),
  ],
  [
    "replayWhere/filter-job-name-nul",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetter.replayWhere({ jobName: "bad.\u0000" }),
  ],
  [
    "replayWhere/options-number",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetter.replayWhere({}, 5 as never),
  ],
  [
    "replayWhere/options-array",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetter.replayWhere({}, [] as never),
  ],
  [
    "replayWhere/options-dryrun-typo",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetter.replayWhere({}, { dryrun: true } as never),
  ],
  [
    "replayWhere/options-dedup-key",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetter.replayWhere({}, { dedupKey: "x" } as never),
  ],
  [
    "replayWhere/options-unique",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetter.replayWhere({}, { unique: true } as never),
  ],
  [
    "replayWhere/options-tx",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetter.replayWhere({}, { tx: {} } as never),
  ],
  [
    "replayWhere/options-group",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetter.replayWhere({}, { group: "g" } as never),
  ],
  [
    "replayWhere/options-run-at-and-delay",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetter.replayWhere({}, { runAt: new Date(), delayMs: 5 }),
  ],
  [
    "replayWhere/options-run-at-invalid",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetter.replayWhere({}, { runAt: new Date("x") }),
  ],
  [
    "replayWhere/options-delay-huge",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetter.replayWhere({}, { delayMs: 1e300 }),
  ],
  [
    "replayWhere/options-queue-empty",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetter.replayWhere({}, { queue: "" }),
  ],
  [
    "replayWhere/options-priority-fraction",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetter.replayWhere({}, { priority: 1.5 }),
  ],
  [
    "replayWhere/dry-run-string",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetter.replayWhere({}, { dryRun: "yes" as never }),
  ],
  // purgeWhere(filter, options): options are { dryRun, actor } only.
  ["purgeWhere/filter-null", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.deadLetter.purgeWhere(null as never)],
  [
    "purgeWhere/filter-limit",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetter.purgeWhere({ limit: 1 } as never),
  ],
  [
    "purgeWhere/filter-unknown-key",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetter.purgeWhere({ name: "bad.dead" } as never),
  ],
  [
    "purgeWhere/filter-until-number",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetter.purgeWhere({ until: 5 as never }),
  ],
  [
    "purgeWhere/filter-until-after-year-9999",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetter.purgeWhere({ until: AFTER_YEAR_9999 }),
  ],
  [
    "purgeWhere/filter-queue-nul",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetter.purgeWhere({ queue: "q\u0000" }),
  ],
  [
    "purgeWhere/options-number",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetter.purgeWhere({}, 5 as never),
  ],
  [
    "purgeWhere/options-dryrun-typo",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetter.purgeWhere({}, { dryrun: true } as never),
  ],
  [
    "purgeWhere/options-queue",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetter.purgeWhere({}, { queue: "x" } as never),
  ],
  [
    "purgeWhere/dry-run-string",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetter.purgeWhere({}, { dryRun: 1 as never }),
  ],
];

catalogue("dead letters", CASES, (f) => {
  it("bad-input/replay-options: delayMs, queue and priority apply to the new job", async () => {
    const newId = await f().soniq.deadLetter.replay(f().deadId, {
      delayMs: 3_600_000,
      queue: "later",
      priority: 7,
    });
    const job = await f().soniq.getJob(newId as string);
    expect(job).toMatchObject({ status: "queued", queue: "later", priority: 7 });
    expect(job?.scheduledAt?.getTime() ?? 0).toBeGreaterThan(Date.now() + 3_000_000);
    expect(await f().soniq.cancelJob(newId as string)).toBe(true);
  });

  it("bad-input/replay-where-options: a dry run counts and changes nothing; delayMs, queue and priority apply to the new jobs", async () => {
    const filter = { jobName: "bad.dead" };
    const resurrections = (await f().soniq.deadLetter.get(f().deadId))?.resurrectionCount;
    expect(await f().soniq.deadLetter.replayWhere(filter, { dryRun: true })).toEqual({
      count: 1,
      dryRun: true,
    });
    expect((await f().soniq.deadLetter.get(f().deadId))?.resurrectionCount).toBe(resurrections);
    expect(await f().soniq.listJobs({ queue: "later.bulk" })).toEqual([]);
    const result = await f().soniq.deadLetter.replayWhere(filter, {
      delayMs: 3_600_000,
      queue: "later.bulk",
      priority: 3,
      actor: "ops",
    });
    expect(result).toEqual({ count: 1, dryRun: false });
    const [job] = await f().soniq.listJobs({ queue: "later.bulk" });
    expect(job).toMatchObject({ status: "queued", jobName: "bad.dead", priority: 3 });
    expect(job?.scheduledAt.getTime() ?? 0).toBeGreaterThan(Date.now() + 3_000_000);
    expect(await f().soniq.cancelJob(job?.id as string)).toBe(true);
  });
});
