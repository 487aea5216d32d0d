/**
 * A limited queue drains at the worker's pace, on every backend. A claim that a queue limit cut short (the
 * queue's concurrency, a group's cap, the rate window, or the worker's own free slots) is not a drained queue:
 * the worker claims again when its jobs finish, or when the rate window allows, never by waiting out its poll
 * interval. Every worker here polls once a minute, so a drain that finishes within the test's budget never
 * waited for a poll. And a worker claims from a limited queue only what it can start: a claimed job counts as
 * processing, so one parked in its buffer would hold a slot another worker could use.
 */
import type { QueueConfig } from "@soniq/core";
import { describe, expect, it } from "vitest";
import { ALL_KINDS, eventually, gate, matrixHarness, maxStartsPerWindow } from "./runtime-support.js";

const JOBS = 2_000;
const POLL_MS = 60_000;
/** Well under one poll interval (60 s, jittered by at most 20 %): a drain that waited for a poll misses it. */
const BUDGET_MS = 30_000;

const LIMITS: [string, QueueConfig, (i: number) => string | undefined][] = [
  ["concurrency 50", { concurrency: 50 }, () => undefined],
  // 20 groups of 2 slots: at the end of the drain the last groups hold the remaining jobs back.
  ["groupConcurrency 2", { groupConcurrency: 2 }, (i) => `g${i % 20}`],
  ["a rate limit that never binds", { rateLimit: { max: 1_000_000, perMs: 1000 } }, () => undefined],
];

describe.each(ALL_KINDS.map((make) => [make().name, make] as const))(
  "queues/limited-drain on %s",
  (_name, make) => {
    const t = matrixHarness(make);

    it.each(LIMITS)(
      "queues/limited-drain-never-polls: a worker at concurrency 10 drains %s",
      async (_label, limit, group) => {
        const soniq = await t.app();
        const queue = t.queue;
        soniq.job("drain.work", async () => null, { queue });
        await soniq.queues.configure(queue, limit);
        await soniq.jobs.enqueueMany(
          Array.from({ length: JOBS }, (_, i) => {
            const g = group(i);
            return { job: "drain.work", args: { i }, options: g === undefined ? {} : { group: g } };
          }),
        );
        await t.started(soniq.worker({ queues: [queue], concurrency: 10, pollIntervalMs: POLL_MS }));
        await eventually(async () => {
          expect((await soniq.jobs.stats({ queue })).done).toBe(JOBS);
        }, BUDGET_MS);
      },
      60_000,
    );

    it("queues/rate-window-rearms-the-claim: a binding rate limit drains as the window allows, no poll", async () => {
      const soniq = await t.app();
      const queue = t.queue;
      const rate = { max: 40, perMs: 250 };
      soniq.job("drain.rated", async (_args, ctx) => ({ claimedAt: ctx.job.updatedAt.getTime() }), { queue });
      await soniq.queues.configure(queue, { rateLimit: rate });
      await soniq.jobs.enqueueMany(
        Array.from({ length: 200 }, (_, i) => ({ job: "drain.rated", args: { i } })),
      );
      await t.started(soniq.worker({ queues: [queue], concurrency: 10, pollIntervalMs: POLL_MS }));
      await eventually(async () => {
        expect((await soniq.jobs.stats({ queue })).done).toBe(200);
      }, BUDGET_MS);
      const done = await soniq.jobs.list({ queue, status: "done", limit: 1000 });
      const times = done.map((j) => (j.result as { claimedAt: number }).claimedAt);
      // A millisecond of slack: Postgres claims at microseconds, the results carry milliseconds.
      expect(maxStartsPerWindow(times, rate.perMs - 1), "starts in any 250 ms window").toBeLessThanOrEqual(
        rate.max,
      );
    }, 60_000);

    it("queues/limited-claim-takes-free-slots: a worker holds no more of a limited queue than it runs", async () => {
      const soniq = await t.app();
      const queue = t.queue;
      const release = gate();
      soniq.job("drain.held", () => release.promise, { queue });
      await soniq.queues.configure(queue, { concurrency: 10 });
      await soniq.jobs.enqueueMany(Array.from({ length: 8 }, (_, i) => ({ job: "drain.held", args: { i } })));
      const processing = async () => (await soniq.jobs.stats({ queue })).processing;
      const first = await t.started(
        soniq.worker({ queues: [queue], concurrency: 2, pollIntervalMs: POLL_MS }),
      );
      await eventually(async () => expect([first.running, await processing()]).toEqual([2, 2]));
      // The queue has 8 free slots, but the first worker keeps none of them in its buffer: the second gets jobs.
      const second = await t.started(
        soniq.worker({ queues: [queue], concurrency: 3, pollIntervalMs: POLL_MS }),
      );
      await eventually(async () => expect([second.running, await processing()]).toEqual([3, 5]));
      expect(first.running).toBe(2);
      release.open();
      await eventually(async () => expect((await soniq.jobs.stats({ queue })).done).toBe(8), BUDGET_MS);
    }, 60_000);
  },
);
