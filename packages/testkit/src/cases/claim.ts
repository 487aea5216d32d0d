import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import type { Job } from "@soniq/core/backend";
import { defineCase } from "../define-case.js";
import { delay } from "../eventually.js";
import {
  claimOne,
  deepEqual,
  enqueue,
  equal,
  ids,
  near,
  requeue,
  settleOne,
  sorted,
  statusOf,
} from "./helpers.js";

const worker = (id: string) => ({
  id,
  hostname: "conformance",
  pid: process.pid,
  queues: [],
  concurrency: 1,
  version: null,
  metadata: null,
});

export const claimCases = [
  defineCase({
    id: "claim/empty-queue-returns-nothing",
    title: "claiming from a queue with no jobs returns no jobs, not capped",
    async run(ctx) {
      const claimed = await ctx.backend.runs.claim({ queues: [ctx.queue()], limit: 5, workerId: null });
      deepEqual(
        claimed,
        { jobs: [], capped: null },
        "claim on an empty queue must return { jobs: [], capped: null }",
      );
    },
  }),
  defineCase({
    id: "claim/priority-then-scheduled-at-then-created-at",
    title: "jobs come out by priority (lower first), then scheduled_at, then created_at",
    async run(ctx) {
      const queue = ctx.queue();
      const base = Date.now() - 60_000;
      const at = (s: number) => new Date(base + s * 1000);
      // Enqueue in an order that matches none of the keys; space them so created_at differs.
      const specs = [
        { name: "p5-t2-first", priority: 5, scheduledAt: at(2) },
        { name: "p1-t3", priority: 1, scheduledAt: at(3) },
        { name: "p5-t1", priority: 5, scheduledAt: at(1) },
        { name: "p1-t1-first", priority: 1, scheduledAt: at(1) },
        { name: "p5-t2-second", priority: 5, scheduledAt: at(2) },
        { name: "p1-t1-second", priority: 1, scheduledAt: at(1) },
      ];
      const byId = new Map<string, string>();
      for (const s of specs) {
        const job = await enqueue(ctx, { queue, priority: s.priority, scheduledAt: s.scheduledAt });
        byId.set(job.id, s.name);
        await delay(3);
      }
      const order: string[] = [];
      for (;;) {
        const batch = (await ctx.backend.runs.claim({ queues: [queue], limit: 2, workerId: null })).jobs;
        if (batch.length === 0) break;
        order.push(...batch.map((j) => byId.get(j.id) ?? j.id));
      }
      deepEqual(
        order,
        ["p1-t1-first", "p1-t1-second", "p1-t3", "p5-t1", "p5-t2-first", "p5-t2-second"],
        "claim order must be priority ASC, scheduled_at ASC, created_at ASC",
      );
    },
  }),
  defineCase({
    id: "claim/future-jobs-wait",
    title: "a job scheduled in the future is not claimed until it is due; scheduledAt null means now",
    async run(ctx) {
      const queue = ctx.queue();
      const future = await enqueue(ctx, { queue, scheduledAt: new Date(Date.now() + 3_600_000) });
      const soon = await enqueue(ctx, { queue, scheduledAt: new Date(Date.now() + 1000) });
      const now = await enqueue(ctx, { queue, scheduledAt: null });
      const first = (await ctx.backend.runs.claim({ queues: [queue], limit: 10, workerId: null })).jobs;
      deepEqual(ids(first), [now.id], "only the job due now may be claimed (scheduledAt null = now)");
      let second: Job[] = [];
      const deadline = Date.now() + 5000;
      while (second.length === 0 && Date.now() < deadline) {
        await delay(25);
        second = (await ctx.backend.runs.claim({ queues: [queue], limit: 10, workerId: null })).jobs;
      }
      deepEqual(ids(second), [soon.id], "the job due in 1 s must be claimable once due, alone");
      const job = await ctx.backend.jobs.get(future.id);
      equal(job?.status, "queued", "the job due in an hour must stay queued");
    },
  }),
  defineCase({
    id: "claim/queue-filter",
    title: "claim takes only the listed queues, never another queue's due jobs; null claims from every queue",
    async run(ctx) {
      const a = ctx.queue("a");
      const b = ctx.queue("b");
      const c = ctx.queue("c");
      const ja = await enqueue(ctx, { queue: a, priority: 1 });
      const jb = await enqueue(ctx, { queue: b });
      const jc = await enqueue(ctx, { queue: c });
      const fromBC = (await ctx.backend.runs.claim({ queues: [b, c], limit: 10, workerId: null })).jobs;
      deepEqual(
        sorted(ids(fromBC)),
        sorted([jb.id, jc.id]),
        "claim({ queues: [b, c] }) must return the jobs of b and c only, not the more urgent job of queue a",
      );
      // null = every queue: keep claiming until our job shows up (other cases may share the storage).
      let found = false;
      for (let i = 0; i < 50 && !found; i++) {
        const batch = (await ctx.backend.runs.claim({ queues: null, limit: 100, workerId: null })).jobs;
        found = batch.some((j) => j.id === ja.id);
        if (batch.length === 0) break;
      }
      assert.ok(found, "claim({ queues: null }) must reach jobs of every queue");
    },
  }),
  defineCase({
    id: "claim/batch-returns-distinct-jobs",
    title: "a batch claim returns up to limit distinct jobs, all processing",
    async run(ctx) {
      const queue = ctx.queue();
      for (let i = 0; i < 5; i++) await enqueue(ctx, { queue });
      const batch = (await ctx.backend.runs.claim({ queues: [queue], limit: 3, workerId: null })).jobs;
      equal(batch.length, 3, "claim with limit 3 and 5 due jobs must return 3");
      equal(new Set(ids(batch)).size, 3, "a batch must not contain the same job twice");
      for (const j of batch) equal(j.status, "processing", "claimed jobs must be returned as processing");
      const rest = (await ctx.backend.runs.claim({ queues: [queue], limit: 10, workerId: null })).jobs;
      equal(rest.length, 2, "the next claim must return the remaining 2");
      equal(ids(rest).filter((id) => ids(batch).includes(id)).length, 0, "no job may be claimed twice");
    },
  }),
  defineCase({
    id: "claim/concurrent-claimers-never-share",
    title: "5 concurrent claim loops over 20 jobs claim each job exactly once",
    async run(ctx) {
      const queue = ctx.queue();
      await ctx.backend.jobs.enqueueMany(
        Array.from({ length: 20 }, () => ctx.newJob({ queue })),
        {},
      );
      const loop = async () => {
        const got: string[] = [];
        for (;;) {
          const batch = (await ctx.backend.runs.claim({ queues: [queue], limit: 3, workerId: null })).jobs;
          if (batch.length === 0) return got;
          got.push(...ids(batch));
        }
      };
      const all = (await Promise.all([loop(), loop(), loop(), loop(), loop()])).flat();
      equal(all.length, 20, `20 jobs must yield 20 claims in total, got ${all.length}`);
      equal(new Set(all).size, 20, "no job may be handed to two claimers");
    },
  }),
  defineCase({
    id: "claim/marks-processing-increments-attempts-stamps-worker",
    title: "a claim sets processing, attempts + 1 and the worker id, in the row and the returned job",
    async run(ctx) {
      const workerId = randomUUID();
      await ctx.backend.workers.register(worker(workerId));
      const queue = ctx.queue();
      const job = await enqueue(ctx, { queue, maxAttempts: 5 });
      const claimed = await claimOne(ctx, queue, workerId);
      equal(claimed.id, job.id, "the claim must return the only queued job");
      equal(claimed.attempts, 1, "the first claim must return attempts 1");
      equal(claimed.workerId, workerId, "the claim must stamp the worker id");
      const stored = await ctx.backend.jobs.get(job.id);
      equal(stored?.status, "processing", "the stored row must be processing");
      equal(stored?.attempts, 1, "the stored row must have attempts 1");
      equal(stored?.workerId, workerId, "the stored row must carry the worker id");
      near(stored?.updatedAt ?? new Date(Number.NaN), Date.now(), 60_000, "updatedAt after the claim");
      await settleOne(ctx, requeue(claimed, { cause: "nack" }), "giving the job back");
      const again = await claimOne(ctx, queue, workerId);
      equal(again.attempts, 2, "a second claim must return attempts 2");
    },
  }),
  defineCase({
    id: "claim/returns-jobs-past-max-attempts",
    title:
      "a claim returns every job it took, one past its max_attempts included (attempts > maxAttempts), and dead-letters nothing",
    async run(ctx) {
      const queue = ctx.queue();
      const job = await enqueue(ctx, { queue, maxAttempts: 1 });
      const first = await claimOne(ctx, queue);
      // The worker died: the job comes back with attempts still 1 (recovery and nack keep attempts).
      await settleOne(ctx, requeue(first, { cause: "nack" }), "giving the job back with attempts kept");
      const second = (await ctx.backend.runs.claim({ queues: [queue], limit: 5, workerId: null })).jobs;
      deepEqual(ids(second), [job.id], "the claim must return the job even though its attempts are used up");
      equal(second[0]?.attempts, 2, "the returned job must carry attempts 2 (one more than maxAttempts 1)");
      equal(second[0]?.status, "processing", "the returned job must be processing");
      equal(await ctx.backend.deadLetters.get(job.id), null, "the claim must not dead-letter it (core does)");
      equal(await statusOf(ctx, job.id), "processing", "the stored row must be processing");
    },
  }),
];
