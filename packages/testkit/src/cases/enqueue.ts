import assert from "node:assert/strict";
import { defineCase } from "../define-case.js";
import { deepEqual, equal, ids, listJobs, near, rejectsWith } from "./helpers.js";

export const enqueueCases = [
  defineCase({
    id: "enqueue/stores-every-field",
    title: "an enqueued job reads back with every field as given and queued/attempts 0 defaults",
    async run(ctx) {
      const scheduledAt = new Date(Date.now() + 60_000);
      // Unique per run (the queue name is the case id plus a random part): a unique job's name + hash
      // would otherwise collide with a queued row left by an earlier run on the same storage.
      const argsHash = `hash-${ctx.queue("fields")}`;
      const job = ctx.newJob({
        jobName: "conformance.fields",
        args: { s: "x", n: 1.5, b: true, nil: null, list: [1, { a: "b" }] },
        argsHash,
        priority: 42,
        maxAttempts: 7,
        scheduledAt,
        dedupKey: `k-${ctx.id()}`,
        unique: true,
        producerId: "producer-1",
      });
      await ctx.backend.jobs.enqueue(job, {});
      const row = await ctx.backend.jobs.get(job.id);
      assert.ok(row !== null, "getJob must find the enqueued job");
      const want = {
        id: job.id,
        jobName: "conformance.fields",
        args: job.args,
        argsHash,
        status: "queued",
        attempts: 0,
        maxAttempts: 7,
        queue: job.queue,
        priority: 42,
        uniqueJob: true,
        dedupKey: job.dedupKey,
        expiresAt: null,
        lastError: null,
        result: null,
        producerId: "producer-1",
        workerId: null,
      };
      for (const [key, value] of Object.entries(want)) {
        deepEqual(row[key as keyof typeof row], value, `jobs.get(...).${key}`);
      }
      equal(row.scheduledAt.getTime(), scheduledAt.getTime(), "scheduledAt as given");
      near(row.createdAt, Date.now(), 60_000, "createdAt");
      near(row.updatedAt, Date.now(), 60_000, "updatedAt");
    },
  }),
  defineCase({
    id: "enqueue/async-durability-stores-alike",
    title:
      'durability "async" enqueues (one, keyed, a batch) store and deduplicate exactly as durable ones (a backend may commit them without a flush)',
    async run(ctx) {
      const queue = ctx.queue("async");
      const async = { durability: "async" } as const;
      const one = ctx.newJob({ queue });
      const key = `k-${ctx.id()}`;
      const keyed = ctx.newJob({ queue, dedupKey: key });
      const batch = [ctx.newJob({ queue }), ctx.newJob({ queue }), ctx.newJob({ queue, dedupKey: key })];
      deepEqual(await ctx.backend.jobs.enqueue(one, async), { id: one.id, deduplicated: false }, "one");
      deepEqual(await ctx.backend.jobs.enqueue(keyed, async), { id: keyed.id, deduplicated: false }, "keyed");
      const results = await ctx.backend.jobs.enqueueMany(batch, async);
      deepEqual(
        results.map((r) => [r.id, r.deduplicated]),
        [
          [batch[0]?.id, false],
          [batch[1]?.id, false],
          [keyed.id, true],
        ],
        "the batch: two new jobs, the keyed one deduplicated onto the earlier job",
      );
      const stored = await listJobs(ctx, { queue });
      deepEqual(
        stored.map((j) => j.id).sort(),
        [one.id, keyed.id, batch[0]?.id, batch[1]?.id].sort(),
        "the queue holds the four jobs",
      );
      for (const job of stored) equal(job.status, "queued", `job ${job.id} status`);
    },
  }),
  defineCase({
    id: "enqueue/tx-rejected-without-capability",
    title:
      "a backend without transactionalEnqueue rejects `tx` with SONIQ_TRANSACTION_UNSUPPORTED and writes nothing",
    requires: { capabilities: { transactionalEnqueue: false } },
    async run(ctx) {
      const job = ctx.newJob();
      await rejectsWith(
        ctx.backend.jobs.enqueue(job, { tx: {} }),
        "SONIQ_TRANSACTION_UNSUPPORTED",
        "enqueue with tx",
      );
      await rejectsWith(
        ctx.backend.jobs.enqueueMany([ctx.newJob()], { tx: {} }),
        "SONIQ_TRANSACTION_UNSUPPORTED",
        "enqueueMany with tx",
      );
      equal(await ctx.backend.jobs.get(job.id), null, "nothing may be written");
    },
  }),
  defineCase({
    id: "enqueue-many/results-in-input-order",
    title: "enqueueMany inserts every job and returns results in input order",
    async run(ctx) {
      const queue = ctx.queue();
      const jobs = Array.from({ length: 25 }, (_, i) =>
        ctx.newJob({ queue, args: { i }, priority: 100 - i }),
      );
      const results = await ctx.backend.jobs.enqueueMany(jobs, {});
      deepEqual(
        results,
        jobs.map((j) => ({ id: j.id, deduplicated: false })),
        "one result per job, in input order",
      );
      equal((await ctx.backend.jobs.stats({ queue })).queued, 25, "all 25 jobs must be queued");
      deepEqual(await ctx.backend.jobs.enqueueMany([], {}), [], "an empty batch returns []");
    },
  }),
  defineCase({
    id: "enqueue-many/all-or-nothing",
    title: "when one job of a batch cannot be inserted, the call rejects and no job of the batch exists",
    async run(ctx) {
      const queue = ctx.queue();
      const existing = ctx.newJob({ queue });
      await ctx.backend.jobs.enqueue(existing, {});
      const good = ctx.newJob({ queue });
      const clash = ctx.newJob({ queue, id: existing.id, args: { clash: true } });
      await rejectsWith(
        ctx.backend.jobs.enqueueMany([good, clash], {}),
        "SONIQ_INVALID_ARGUMENT",
        "enqueueMany with a job whose id already exists",
      );
      equal(
        await ctx.backend.jobs.get(good.id),
        null,
        "the valid job of the failed batch must not be written",
      );
      deepEqual(
        (await ctx.backend.jobs.get(existing.id))?.args,
        existing.args,
        "the existing job must be unchanged",
      );
      equal((await ctx.backend.jobs.stats({ queue })).queued, 1, "only the existing job may be queued");
    },
  }),
  defineCase({
    id: "enqueue-many/dedups-within-and-across-batches",
    title: "enqueueMany deduplicates against queued rows and within the batch, reporting the existing id",
    async run(ctx) {
      const queue = ctx.queue();
      const dedupKey = `k-${ctx.id()}`;
      const held = ctx.newJob({ queue, dedupKey: `${dedupKey}-held` });
      await ctx.backend.jobs.enqueue(held, {});
      const a = ctx.newJob({ queue, dedupKey });
      const b = ctx.newJob({ queue, dedupKey });
      const c = ctx.newJob({ queue, dedupKey: `${dedupKey}-held` });
      const results = await ctx.backend.jobs.enqueueMany([a, b, c], {});
      deepEqual(
        results,
        [
          { id: a.id, deduplicated: false },
          { id: a.id, deduplicated: true },
          { id: held.id, deduplicated: true },
        ],
        "a new key inserts, its repeat in the batch and a held key return the existing ids",
      );
      deepEqual(ids(await listJobs(ctx, { queue })).sort(), [a.id, held.id].sort(), "exactly two rows");
    },
  }),
  defineCase({
    id: "enqueue/args-of-every-json-kind",
    title:
      "args of every JSON kind (null, string, number, boolean, array, object) read back as given, alone or in a batch",
    async run(ctx) {
      const queue = ctx.queue();
      const kinds: unknown[] = [
        null,
        'a "quoted" \\ string, ünïcödé',
        0,
        -1.5,
        false,
        [],
        [null, { a: [1] }],
        {},
        { "{,}": null },
      ];
      const alone = kinds.map((args) => ctx.newJob({ queue, args }));
      for (const job of alone) await ctx.backend.jobs.enqueue(job, {});
      const batch = kinds.map((args) => ctx.newJob({ queue, args }));
      await ctx.backend.jobs.enqueueMany(batch, {});
      const keyed = kinds.map((args) => ctx.newJob({ queue, args, dedupKey: `k-${ctx.id()}` }));
      await ctx.backend.jobs.enqueueMany(keyed, {});
      for (const [how, jobs] of [
        ["enqueue", alone],
        ["enqueueMany", batch],
        ["enqueueMany with dedup keys", keyed],
      ] as const) {
        for (const job of jobs) {
          deepEqual(
            (await ctx.backend.jobs.get(job.id))?.args,
            job.args,
            `${how}: args ${JSON.stringify(job.args)}`,
          );
        }
      }
    },
  }),
];
