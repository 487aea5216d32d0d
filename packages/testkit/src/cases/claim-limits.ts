/**
 * One claim order on every backend (DESIGN.md section 6): a claim across limited and unlimited queues takes
 * the first `limit` claimable jobs in priority, scheduled_at, created_at order, a limited queue giving at most
 * its free slots and limited queues at most `limitedMax` in all; and a queue's limits count every worker's
 * claims, not one worker's.
 */
import { randomUUID } from "node:crypto";
import { auditRecord, type ClaimRequest, type QueueConfigPatch } from "@soniq/core/backend";
import { defineCase } from "../define-case.js";
import type { CaseContext } from "../types.js";
import { deepEqual, enqueue, equal } from "./helpers.js";

const configure = (ctx: CaseContext, queue: string, patch: QueueConfigPatch) =>
  ctx.backend.queues.configure(queue, patch, auditRecord("queue.configure", "kit", queue, { ...patch }));

/** Jobs by a label the case chose, so a failure names them (`l1`, `o2`) rather than printing ids. */
type Labelled = Map<string, string>;

function labels(named: Labelled, jobs: readonly { id: string }[]): string[] {
  return jobs.map((j) => named.get(j.id) ?? `an unexpected job ${j.id}`);
}

async function claimLabels(ctx: CaseContext, named: Labelled, request: ClaimRequest) {
  const result = await ctx.backend.runs.claim(request);
  return { labels: labels(named, result.jobs), capped: result.capped };
}

/** Enqueue `spec` ([label, queue, priority] in turn), all due now; returns id -> label. */
async function seed(ctx: CaseContext, spec: readonly [string, string, number][]): Promise<Labelled> {
  const named: Labelled = new Map();
  for (const [label, queue, priority] of spec) named.set((await enqueue(ctx, { queue, priority })).id, label);
  return named;
}

const worker = (id: string) => ({
  id,
  hostname: "conformance",
  pid: process.pid,
  queues: [],
  concurrency: 10,
  version: null,
  metadata: null,
});

export const claimLimitCases = [
  defineCase({
    id: "claim/one-order-across-limited-and-open-queues",
    title:
      "a claim across limited and unlimited queues takes the first `limit` claimable jobs in priority order, a limited queue giving at most its free slots",
    requires: { declares: ["queues"] },
    async run(ctx) {
      const open = ctx.queue("open");
      const conc = ctx.queue("conc");
      const rate = ctx.queue("rate");
      // Priority decides the order (lower first); l3 and r2 are held back by their queue's limit.
      const named = await seed(ctx, [
        ["o1", open, 2],
        ["o2", open, 5],
        ["o3", open, 7],
        ["l1", conc, 1],
        ["l2", conc, 3],
        ["l3", conc, 4],
        ["r1", rate, 6],
        ["r2", rate, 8],
      ]);
      await configure(ctx, conc, { concurrency: 2 });
      await configure(ctx, rate, { rateLimit: { max: 1, perMs: 3_600_000 } });
      const queues = [rate, open, conc];
      const first = await claimLabels(ctx, named, { queues, limit: 4, workerId: null });
      deepEqual(
        first.labels,
        ["l1", "o1", "l2", "o2"],
        "claim(limit 4) over an open queue (o1 p2, o2 p5, o3 p7), a queue with concurrency 2 (l1 p1, l2 p3, l3 p4) " +
          "and one rate-limited to 1 start (r1 p6, r2 p8) must take the first 4 claimable jobs by priority, in " +
          "that order: limited queues neither go first (r1 would displace o2) nor last (o3 would displace l2)",
      );
      equal(first.capped, null, "a full claim (4 of 4) is never capped");
      const budgetless = await claimLabels(ctx, named, { queues, limit: 10, workerId: null, limitedMax: 0 });
      deepEqual(budgetless.labels, ["o3"], "with limitedMax 0 only the open queue's o3 may be claimed");
      equal(
        budgetless.capped?.retryInMs,
        null,
        "with limitedMax 0 and due jobs in limited queues the claim is capped by capacity: " +
          `capped must be { retryInMs: null }, got ${JSON.stringify(budgetless.capped)}`,
      );
      const rest = await claimLabels(ctx, named, { queues, limit: 10, workerId: null });
      deepEqual(
        rest.labels,
        ["r1"],
        "the concurrency-2 queue is full (l1, l2 processing): only the rate-limited queue's first job (r1) may start",
      );
      const ms = rest.capped?.retryInMs;
      equal(
        typeof ms === "number" && ms >= 1 && ms <= 3_600_000,
        true,
        `r1 filled the rate window with r2 due, so capped.retryInMs must say when it opens (1..3600000 ms), got ${JSON.stringify(rest.capped)}`,
      );
    },
  }),
  defineCase({
    id: "claim/limited-max-goes-in-claim-order",
    title:
      "limitedMax is spent on limited queues' jobs in claim order across queues (not queue by queue), and the rest comes back capped",
    requires: { declares: ["queues"] },
    async run(ctx) {
      // Names chosen so the queue holding the earliest job sorts last by name.
      const a = ctx.queue("a_limited");
      const z = ctx.queue("z_limited");
      const named = await seed(ctx, [
        ["a1", a, 5],
        ["a2", a, 6],
        ["z1", z, 1],
        ["z2", z, 3],
      ]);
      await configure(ctx, a, { concurrency: 10 });
      await configure(ctx, z, { concurrency: 10 });
      const first = await claimLabels(ctx, named, {
        queues: [a, z],
        limit: 10,
        workerId: null,
        limitedMax: 1,
      });
      deepEqual(
        first.labels,
        ["z1"],
        "claim([a, z], limitedMax 1) over a (a1 p5, a2 p6) and z (z1 p1, z2 p3), both with free slots, must take z1: " +
          "the budget goes to the first job in claim order, whatever the queue's name or place in the request",
      );
      equal(
        first.capped !== null && first.capped.retryInMs === null,
        true,
        `limitedMax left due jobs in both limited queues: capped must be { retryInMs: null }, got ${JSON.stringify(first.capped)}`,
      );
      const second = await claimLabels(ctx, named, {
        queues: [z, a],
        limit: 10,
        workerId: null,
        limitedMax: 1,
      });
      deepEqual(
        second.labels,
        ["z2"],
        "claim([z, a], limitedMax 1) must take the next job in claim order, z2",
      );
      const rest = await claimLabels(ctx, named, {
        queues: [z, a],
        limit: 10,
        workerId: null,
        limitedMax: 2,
      });
      deepEqual(rest.labels, ["a1", "a2"], "claim([z, a], limitedMax 2) must take a1 then a2");
      equal(rest.capped, null, "both limited queues are drained: capped must be null");
    },
  }),
  defineCase({
    id: "queues/limits-count-every-worker",
    title:
      "a queue's rate limit and concurrency count the starts and processing jobs of every worker, not of the claiming one",
    async run(ctx) {
      const [one, two] = [randomUUID(), randomUUID()];
      await ctx.backend.workers.register(worker(one));
      await ctx.backend.workers.register(worker(two));
      const rated = ctx.queue("rated");
      const capped = ctx.queue("capped");
      for (let i = 0; i < 3; i++) await enqueue(ctx, { queue: rated });
      for (let i = 0; i < 3; i++) await enqueue(ctx, { queue: capped });
      await configure(ctx, rated, { rateLimit: { max: 2, perMs: 3_600_000 } });
      await configure(ctx, capped, { concurrency: 2 });
      for (const [queue, what] of [
        [rated, "rate limit of 2 starts per hour"],
        [capped, "concurrency of 2"],
      ] as const) {
        const first = await ctx.backend.runs.claim({ queues: [queue], limit: 2, workerId: one });
        equal(first.jobs.length, 2, `worker one claiming 2 from a queue with a ${what} must get 2`);
        const second = await ctx.backend.runs.claim({ queues: [queue], limit: 2, workerId: two });
        deepEqual(
          second.jobs.map((j) => j.id),
          [],
          `worker two must get nothing: worker one's 2 claims already used the queue's ${what}. A limit counted ` +
            "per worker id (or per claimer) lets every worker take its own share",
        );
        equal(
          second.capped !== null,
          true,
          `worker two's empty claim left a due job behind its ${what}: capped must be set`,
        );
      }
    },
  }),
] as const;
