/**
 * The bad-input catalogue (see bad-input-support.ts): `deadLetters.list`, `.export`, `.replay` and the bulk
 * operations by filter, `.replayWhere` and `.purgeWhere` (the fixture's one dead letter would be replayed or
 * purged by any bad call that got through).
 */
import { expect, it } from "vitest";
import { type Case, catalogue } from "./bad-input-support.js";

const BEFORE_YEAR_1 = new Date(Date.UTC(-10_000, 0, 1));
const AFTER_YEAR_9999 = new Date(Date.UTC(10_000, 0, 1));

const CASES: readonly Case[] = [
  [
    "deadLetters.list/since-string",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetters.list({ since: "yesterday" as never }),
  ],
  [
    "deadLetters.list/until-number",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetters.list({ until: 5 as never }),
  ],
  ["deadLetters.list/limit-0", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.deadLetters.list({ limit: 0 })],
  [
    "deadLetters.list/unknown-key",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetters.list({ name: "x" } as never),
  ],
  [
    "deadLetters.export/since-string",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetters.export({ since: "yesterday" as never }),
  ],
  [
    "deadLetters.replay/dedup-key",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetters.replay(f.deadId, { dedupKey: "x" } as never),
  ],
  [
    "deadLetters.replay/unique",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetters.replay(f.deadId, { unique: true } as never),
  ],
  [
    "deadLetters.replay/tx",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetters.replay(f.deadId, { tx: {} } as never),
  ],
  [
    "deadLetters.replay/options-number",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetters.replay(f.deadId, 5 as never),
  ],
  [
    "deadLetters.replay/run-at-and-delay",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetters.replay(f.deadId, { runAt: new Date(), delayMs: 5 }),
  ],
  [
    "deadLetters.replay/run-at-invalid",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetters.replay(f.deadId, { runAt: new Date("x") }),
  ],
  ["deadLetters.list/null", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.deadLetters.list(null as never)],
  [
    "deadLetters.list/since-invalid-date",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetters.list({ since: new Date("x") }),
  ],
  ["deadLetters.export/null", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.deadLetters.export(null as never)],
  [
    "deadLetters.replay/queue-empty",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetters.replay(f.deadId, { queue: "" }),
  ],
  [
    "deadLetters.replay/priority-fraction",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetters.replay(f.deadId, { priority: 1.5 }),
  ],
  [
    "deadLetters.list/job-name-nul",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetters.list({ jobName: "a\u0000" }),
  ],
  [
    "deadLetters.list/since-before-year-1",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetters.list({ since: BEFORE_YEAR_1 }),
  ],
  [
    "deadLetters.list/until-after-year-9999",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetters.list({ until: AFTER_YEAR_9999 }),
  ],
  [
    "deadLetters.export/reason-nul",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetters.export({ reason: "\u0000" }),
  ],
  [
    "deadLetters.export/destination-number",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetters.export({}, 5 as never),
  ],
  [
    "deadLetters.export/destination-without-once",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetters.export({}, { write: () => true } as never),
  ],
  // replayWhere(filter, options): the filter is deadLetters.list's without paging.
  [
    "replayWhere/filter-null",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetters.replayWhere(null as never),
  ],
  [
    "replayWhere/filter-string",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetters.replayWhere("all" as never),
  ],
  [
    "replayWhere/filter-limit",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetters.replayWhere({ limit: 5 } as never),
  ],
  [
    "replayWhere/filter-offset",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetters.replayWhere({ offset: 0 } as never),
  ],
  [
    "replayWhere/filter-unknown-key",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetters.replayWhere({ name: "bad.dead" } as never),
  ],
  [
    "replayWhere/filter-since-string",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetters.replayWhere({ since: "yesterday" as never }),
  ],
  [
    "replayWhere/filter-since-before-year-1",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetters.replayWhere({ since: BEFORE_YEAR_1 }),
  ],
  [
    "replayWhere/filter-job-name-nul",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetters.replayWhere({ jobName: "bad.\u0000" }),
  ],
  [
    "replayWhere/options-number",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetters.replayWhere({}, 5 as never),
  ],
  [
    "replayWhere/options-array",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetters.replayWhere({}, [] as never),
  ],
  [
    "replayWhere/options-dryrun-typo",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetters.replayWhere({}, { dryrun: true } as never),
  ],
  [
    "replayWhere/options-dedup-key",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetters.replayWhere({}, { dedupKey: "x" } as never),
  ],
  [
    "replayWhere/options-unique",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetters.replayWhere({}, { unique: true } as never),
  ],
  [
    "replayWhere/options-tx",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetters.replayWhere({}, { tx: {} } as never),
  ],
  [
    "replayWhere/options-group",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetters.replayWhere({}, { group: "g" } as never),
  ],
  [
    "replayWhere/options-run-at-and-delay",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetters.replayWhere({}, { runAt: new Date(), delayMs: 5 }),
  ],
  [
    "replayWhere/options-run-at-invalid",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetters.replayWhere({}, { runAt: new Date("x") }),
  ],
  [
    "replayWhere/options-delay-huge",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetters.replayWhere({}, { delayMs: 1e300 }),
  ],
  [
    "replayWhere/options-queue-empty",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetters.replayWhere({}, { queue: "" }),
  ],
  [
    "replayWhere/options-priority-fraction",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetters.replayWhere({}, { priority: 1.5 }),
  ],
  [
    "replayWhere/dry-run-string",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetters.replayWhere({}, { dryRun: "yes" as never }),
  ],
  // purgeWhere(filter, options): options are { dryRun, actor } only.
  ["purgeWhere/filter-null", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.deadLetters.purgeWhere(null as never)],
  [
    "purgeWhere/filter-limit",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetters.purgeWhere({ limit: 1 } as never),
  ],
  [
    "purgeWhere/filter-unknown-key",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetters.purgeWhere({ name: "bad.dead" } as never),
  ],
  [
    "purgeWhere/filter-until-number",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetters.purgeWhere({ until: 5 as never }),
  ],
  [
    "purgeWhere/filter-until-after-year-9999",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetters.purgeWhere({ until: AFTER_YEAR_9999 }),
  ],
  [
    "purgeWhere/filter-queue-nul",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetters.purgeWhere({ queue: "q\u0000" }),
  ],
  [
    "purgeWhere/options-number",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetters.purgeWhere({}, 5 as never),
  ],
  [
    "purgeWhere/options-dryrun-typo",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetters.purgeWhere({}, { dryrun: true } as never),
  ],
  [
    "purgeWhere/options-queue",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetters.purgeWhere({}, { queue: "x" } as never),
  ],
  [
    "purgeWhere/dry-run-string",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetters.purgeWhere({}, { dryRun: 1 as never }),
  ],
];

catalogue("dead letters", CASES, (f) => {
  it("bad-input/replay-options: delayMs, queue and priority apply to the new job", async () => {
    const newId = await f().soniq.deadLetters.replay(f().deadId, {
      delayMs: 3_600_000,
      queue: "later",
      priority: 7,
    });
    const job = await f().soniq.jobs.get(newId as string);
    expect(job).toMatchObject({ status: "queued", queue: "later", priority: 7 });
    expect(job?.scheduledAt?.getTime() ?? 0).toBeGreaterThan(Date.now() + 3_000_000);
    expect(await f().soniq.jobs.cancel(newId as string)).toBe(true);
  });

  it("bad-input/replay-where-options: a dry run counts and changes nothing; delayMs, queue and priority apply to the new jobs", async () => {
    const filter = { jobName: "bad.dead" };
    const resurrections = (await f().soniq.deadLetters.get(f().deadId))?.resurrectionCount;
    expect(await f().soniq.deadLetters.replayWhere(filter, { dryRun: true })).toEqual({
      count: 1,
      dryRun: true,
    });
    expect((await f().soniq.deadLetters.get(f().deadId))?.resurrectionCount).toBe(resurrections);
    expect(await f().soniq.jobs.list({ queue: "later.bulk" })).toEqual([]);
    const result = await f().soniq.deadLetters.replayWhere(filter, {
      delayMs: 3_600_000,
      queue: "later.bulk",
      priority: 3,
      actor: "ops",
    });
    expect(result).toEqual({ count: 1, dryRun: false });
    const [job] = await f().soniq.jobs.list({ queue: "later.bulk" });
    expect(job).toMatchObject({ status: "queued", jobName: "bad.dead", priority: 3 });
    expect(job?.scheduledAt.getTime() ?? 0).toBeGreaterThan(Date.now() + 3_000_000);
    expect(await f().soniq.jobs.cancel(job?.id as string)).toBe(true);
  });
});
