/**
 * The rate window's unit: `perMs` is milliseconds. A short window (400 ms) must open again within about
 * that long, and the claim that found it full must say it opens within `perMs` (a window read in seconds
 * would keep the queue shut for 400 s and pass every case that uses an hour).
 */
import { auditRecord } from "@soniq/core/backend";
import { defineCase } from "../define-case.js";
import { eventually } from "../eventually.js";
import { deepEqual, done, enqueue, equal, ids, settleOne } from "./helpers.js";

const PER_MS = 400;

export const queueRateWindowCases = [
  defineCase({
    id: "queues/rate-window-is-milliseconds",
    title: "a rate window of 400 ms opens again within seconds, and a full window reports retryInMs <= perMs",
    async run(ctx) {
      const queue = ctx.queue("ratems");
      const first = await enqueue(ctx, { queue, priority: 1 });
      const second = await enqueue(ctx, { queue, priority: 2 });
      const rateLimit = { max: 1, perMs: PER_MS };
      await ctx.backend.queues.configure(
        queue,
        { rateLimit },
        auditRecord("queue.configure", "kit", queue, { rateLimit }),
      );
      const claim = () => ctx.backend.runs.claim({ queues: [queue], limit: 2, workerId: null });
      const opened = Date.now();
      const one = await claim();
      deepEqual(ids(one.jobs), [first.id], "with max 1 per 400 ms, a claim of 2 must take 1");
      const ms = one.capped?.retryInMs;
      equal(
        typeof ms === "number" && ms >= 1 && ms <= PER_MS,
        true,
        `the full window must open within perMs (1..${PER_MS} ms), got retryInMs ${ms}`,
      );
      for (const job of one.jobs) await settleOne(ctx, done(job), "finishing the first job");
      const next = await eventually(
        async () => {
          const got = (await claim()).jobs;
          equal(got.length, 1, "the 400 ms window has not opened yet");
          return got;
        },
        { timeoutMs: 5000, intervalMs: 50 },
      );
      deepEqual(ids(next), [second.id], "once the window opened, the second job must be claimed");
      equal(
        Date.now() - opened >= PER_MS / 2,
        true,
        "the second start must wait for the window (not be allowed at once)",
      );
    },
  }),
];
