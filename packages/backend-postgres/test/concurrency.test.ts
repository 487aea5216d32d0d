/**
 * Concurrency on a real database: claimers never share a job, racing settles of one job apply once and
 * never fail, and racing duplicate enqueues leave one row and all get its id. Each claimer uses its own backend (its own pool), like separate processes.
 */
import { randomUUID } from "node:crypto";
import type { Job, Settlement } from "@soniq/core/backend";
import { uniqueQueue } from "@soniq/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PostgresBackend, postgresBackend } from "../src/index.js";
import { createMigratedDatabase, newJob, type TestDatabase } from "./pgdb.js";

let db: TestDatabase;
let backends: PostgresBackend[];

beforeAll(async () => {
  db = await createMigratedDatabase();
  backends = [1, 2, 3, 4, 5].map(() => postgresBackend({ connectionString: db.url }));
});
afterAll(async () => {
  await Promise.all((backends ?? []).map((b) => b.close()));
  await db?.drop();
});

async function countRows(backend: PostgresBackend, queue: string): Promise<number> {
  return (await backend.jobs.stats({ queue })).total;
}

describe("concurrency/claim", () => {
  it("5 concurrent claimers on one job: exactly one gets it", async () => {
    const queue = uniqueQueue();
    const job = newJob({ queue });
    await backends[0]?.jobs.enqueue(job, {});
    const results = await Promise.all(
      backends.map((b) => b.runs.claim({ queues: [queue], limit: 1, workerId: null })),
    );
    const claimed = results.flatMap((r) => r.jobs);
    expect(claimed.map((j) => j.id)).toEqual([job.id]);
    expect(claimed[0]?.attempts).toBe(1);
  });

  it("10 jobs over 5 concurrent claim loops: 10 distinct claims, nothing left", async () => {
    const queue = uniqueQueue();
    const jobs = Array.from({ length: 10 }, () => newJob({ queue }));
    await backends[0]?.jobs.enqueueMany(jobs, {});
    const loop = async (backend: PostgresBackend): Promise<Job[]> => {
      const mine: Job[] = [];
      for (;;) {
        const batch = (await backend.runs.claim({ queues: [queue], limit: 1, workerId: null })).jobs;
        if (batch.length === 0) return mine;
        mine.push(...batch);
      }
    };
    const claimed = (await Promise.all(backends.map(loop))).flat();
    expect(claimed).toHaveLength(10);
    expect(new Set(claimed.map((j) => j.id))).toEqual(new Set(jobs.map((j) => j.id)));
    expect((await backends[0]?.jobs.stats({ queue }))?.processing).toBe(10);
  });

  it("concurrent batch claims over many jobs never overlap", async () => {
    const queue = uniqueQueue();
    await backends[0]?.jobs.enqueueMany(
      Array.from({ length: 200 }, () => newJob({ queue })),
      {},
    );
    const results = await Promise.all(
      backends.map((b) => b.runs.claim({ queues: [queue], limit: 50, workerId: null })),
    );
    const ids = results.flatMap((r) => r.jobs).map((j) => j.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBe(200);
  });
});

describe("concurrency/settle", () => {
  async function claimedJob(): Promise<Job> {
    const queue = uniqueQueue();
    await backends[0]?.jobs.enqueue(newJob({ queue }), {});
    const [job] = (await backends[0]?.runs.claim({ queues: [queue], limit: 1, workerId: null }))?.jobs ?? [];
    if (!job) throw new Error("expected a claimed job");
    return job;
  }

  it("5 concurrent dead_letter settles of one job: one applies, the others answer false, one dead-letter row", async () => {
    const job = await claimedJob();
    const item: Settlement = {
      kind: "dead_letter",
      id: job.id,
      attempt: job.attempts,
      reason: "permanent_failure",
      error: "e",
      tags: null,
    };
    const results = await Promise.all(backends.map((b) => b.runs.settle([item])));
    expect(results.flat().filter(Boolean)).toHaveLength(1);
    expect(await backends[0]?.jobs.get(job.id)).toBeNull();
    expect((await backends[0]?.deadLetters.get(job.id))?.id).toBe(job.id);
  });

  it("concurrent settles of different outcomes for one job: exactly one applies", async () => {
    const job = await claimedJob();
    const ref = { id: job.id, attempt: job.attempts };
    const items: Settlement[] = [
      { ...ref, kind: "done", result: null, resultTtlMs: 60_000 },
      { ...ref, kind: "dead_letter", reason: "permanent_failure", error: null, tags: null },
      { ...ref, kind: "requeue", cause: "retry", attempts: job.attempts, delayMs: 0, lastError: "e" },
      { ...ref, kind: "done", result: null, resultTtlMs: 0 },
      { ...ref, kind: "requeue", cause: "nack", attempts: job.attempts, delayMs: 0, lastError: null },
    ];
    const results = await Promise.all(backends.map((b, i) => b.runs.settle([items[i] as Settlement])));
    expect(results.flat().filter(Boolean)).toHaveLength(1);
  });
});

describe("concurrency/dedup", () => {
  it("10 concurrent unique enqueues leave one row and all return its id", async () => {
    const queue = uniqueQueue();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        backends[i % 5]?.jobs.enqueue(newJob({ queue, unique: true, argsHash: "same-args" }), {}),
      ),
    );
    const ids = new Set(results.map((r) => r?.id));
    expect(ids.size).toBe(1);
    expect(results.filter((r) => r?.deduplicated === false)).toHaveLength(1);
    expect(await countRows(backends[0] as PostgresBackend, queue)).toBe(1);
  });

  it("10 concurrent enqueues with one dedup key leave one row and all return its id", async () => {
    const queue = uniqueQueue();
    const dedupKey = randomUUID();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => backends[i % 5]?.jobs.enqueue(newJob({ queue, dedupKey }), {})),
    );
    expect(new Set(results.map((r) => r?.id)).size).toBe(1);
    expect(await countRows(backends[0] as PostgresBackend, queue)).toBe(1);
  });

  it("10 concurrent enqueues with the same unique args but different dedup keys leave one row", async () => {
    const queue = uniqueQueue();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        backends[i % 5]?.jobs.enqueue(
          newJob({ queue, unique: true, argsHash: "both", dedupKey: randomUUID() }),
          {},
        ),
      ),
    );
    expect(new Set(results.map((r) => r?.id)).size).toBe(1);
    expect(await countRows(backends[0] as PostgresBackend, queue)).toBe(1);
  });

  it("concurrent enqueueMany batches sharing dedup keys resolve every key to one row", async () => {
    const queue = uniqueQueue();
    const keys = Array.from({ length: 20 }, () => randomUUID());
    const batches = await Promise.all(
      backends.map((b) =>
        b.jobs.enqueueMany(
          keys.map((dedupKey) => newJob({ queue, dedupKey })),
          {},
        ),
      ),
    );
    for (let k = 0; k < keys.length; k++) {
      expect(new Set(batches.map((batch) => batch[k]?.id)).size).toBe(1);
    }
    expect(await countRows(backends[0] as PostgresBackend, queue)).toBe(keys.length);
  });
});
