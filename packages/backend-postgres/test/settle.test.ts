/**
 * `runs.settle` on PostgreSQL: any mix of outcomes in ONE statement, each item fenced by (id, attempt), a
 * per-item result in input order; dead-letter conflicts skipped with the job row intact; the test-only fault
 * hook rolling a whole settle back; and the claim returning jobs already past their max_attempts.
 */
import { randomUUID } from "node:crypto";
import { type DeadLetterInterrupt, postgresBackendWithFaults } from "@soniq/backend-postgres/testing";
import type { Job, Settlement } from "@soniq/core/backend";
import { uniqueQueue } from "@soniq/testkit";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PostgresBackend, postgresBackend } from "../src/index.js";
import { postgresInspector } from "./inspector.js";
import { createMigratedDatabase, newJob, type TestDatabase } from "./pgdb.js";

let db: TestDatabase;
let admin: pg.Pool;
let pool: pg.Pool;
let backend: PostgresBackend;
let inspector: ReturnType<typeof postgresInspector>;
/** Statements the backend's pool ran (text), to count a settle's round trips. */
let statements: string[] = [];

beforeAll(async () => {
  db = await createMigratedDatabase();
  admin = new pg.Pool({ connectionString: db.url });
  admin.on("error", () => {});
  pool = new pg.Pool({ connectionString: db.url });
  pool.on("error", () => {});
  const run = pool.query.bind(pool);
  pool.query = ((config: unknown, values?: unknown) => {
    statements.push(typeof config === "string" ? config : String((config as { text?: string }).text));
    return (run as (a: unknown, b?: unknown) => unknown)(config, values);
  }) as typeof pool.query;
  backend = postgresBackend({ pool });
  inspector = postgresInspector(admin);
});
afterAll(async () => {
  await backend?.close();
  await pool?.end();
  await admin?.end();
  await db?.drop();
});

/** Enqueue `count` jobs on a fresh queue and claim them all (in enqueue order: priorities 0, 1, 2, ...). */
async function claimed(
  count: number,
  overrides: Parameters<typeof newJob>[0] = {},
  b = backend,
): Promise<Job[]> {
  const queue = uniqueQueue();
  const jobs = Array.from({ length: count }, (_, i) => newJob({ queue, priority: i, ...overrides }));
  await b.jobs.enqueueMany(jobs, {});
  const taken = (await b.runs.claim({ queues: [queue], limit: count, workerId: null })).jobs;
  expect(taken.map((j) => j.id)).toEqual(jobs.map((j) => j.id));
  return taken;
}

function done(job: Job, resultTtlMs = 60_000, result: unknown = { ok: true }): Settlement {
  return { kind: "done", id: job.id, attempt: job.attempts, result, resultTtlMs };
}

function requeue(job: Job, fields: Partial<Extract<Settlement, { kind: "requeue" }>> = {}): Settlement {
  return {
    kind: "requeue",
    id: job.id,
    attempt: job.attempts,
    cause: "retry",
    attempts: job.attempts,
    delayMs: 0,
    lastError: "failed",
    ...fields,
  };
}

function deadLetter(
  job: Job,
  error: string | null = "boom",
  tags: Record<string, unknown> | null = null,
): Settlement {
  return { kind: "dead_letter", id: job.id, attempt: job.attempts, reason: "permanent_failure", error, tags };
}

async function insertDeadLetterRow(id: string): Promise<void> {
  await admin.query(
    `INSERT INTO soniq_dead_letter_jobs (id, job_name, args, queue, priority, max_attempts, attempts,
       dead_letter_reason, original_created_at) VALUES ($1, 'older', '{}', 'q', 1, 1, 1, 'permanent_failure', now())`,
    [id],
  );
}

describe("settle", () => {
  it("writes a mixed batch in one statement and answers per item, in input order", async () => {
    const [kept, deleted, retried, dead, stale] = await claimed(5);
    if (!kept || !deleted || !retried || !dead || !stale) throw new Error("expected five jobs");
    statements = [];
    const results = await backend.runs.settle([
      done(kept, 60_000, { n: 1 }),
      deadLetter(dead, "fatal", { t: 1 }),
      requeue(retried, { lastError: "try again" }),
      { ...done(stale), attempt: stale.attempts + 1 },
      done(deleted, 0),
    ]);
    expect(results).toEqual([true, true, true, false, true]);
    expect(statements).toHaveLength(1);
    expect(await inspector.readJob(kept.id)).toMatchObject({ status: "done", result: { n: 1 } });
    expect(await inspector.readJob(deleted.id)).toBeNull();
    expect(await inspector.readJob(retried.id)).toMatchObject({ status: "queued", lastError: "try again" });
    expect(await inspector.readJob(dead.id)).toBeNull();
    expect(await inspector.readDeadLetterJob(dead.id)).toMatchObject({ lastError: "fatal", tags: { t: 1 } });
    expect(await inspector.readJob(stale.id)).toMatchObject({ status: "processing", attempts: 1 });
  });

  it("a done item keeps the result for resultTtlMs; TTL 0 deletes the row", async () => {
    const [kept, gone, nullResult] = await claimed(3);
    if (!kept || !gone || !nullResult) throw new Error("expected three jobs");
    const before = Date.now();
    expect(
      await backend.runs.settle([
        done(kept, 3_600_000, [1, "a"]),
        done(gone, 0),
        done(nullResult, 1000, null),
      ]),
    ).toEqual([true, true, true]);
    const row = await inspector.readJob(kept.id);
    expect(row).toMatchObject({ status: "done", result: [1, "a"] });
    const expiresIn = (row?.expiresAt?.getTime() ?? 0) - before;
    expect(expiresIn).toBeGreaterThan(3_500_000);
    expect(expiresIn).toBeLessThan(3_700_000);
    expect(await inspector.readJob(gone.id)).toBeNull();
    expect(await inspector.readJob(nullResult.id)).toMatchObject({ status: "done", result: null });
  });

  it("a requeue writes the attempts, last_error and delay it carries and clears worker_id", async () => {
    const workerId = randomUUID();
    await backend.workers.register({
      id: workerId,
      hostname: "h",
      pid: 1,
      queues: [],
      concurrency: 2,
      version: null,
      metadata: null,
    });
    const queue = uniqueQueue();
    const [first, second] = [newJob({ queue, priority: 0 }), newJob({ queue, priority: 1 })];
    await backend.jobs.enqueueMany([first, second], {});
    const [a, b] = (await backend.runs.claim({ queues: [queue], limit: 2, workerId })).jobs;
    if (!a || !b) throw new Error("expected two jobs");
    await admin.query("UPDATE soniq_jobs SET last_error = 'earlier' WHERE id = $1", [b.id]);
    const before = Date.now();
    expect(
      await backend.runs.settle([
        requeue(a, {
          cause: "snooze",
          attempts: a.attempts - 1,
          delayMs: 600_000,
          lastError: "SNOOZE: later",
        }),
        requeue(b, { cause: "nack", lastError: null }),
      ]),
    ).toEqual([true, true]);
    const snoozed = await inspector.readJob(a.id);
    expect(snoozed).toMatchObject({
      status: "queued",
      attempts: 0,
      lastError: "SNOOZE: later",
      workerId: null,
    });
    expect((snoozed?.scheduledAt.getTime() ?? 0) - before).toBeGreaterThan(590_000);
    const nacked = await inspector.readJob(b.id);
    expect(nacked).toMatchObject({ status: "queued", attempts: 1, lastError: "earlier", workerId: null });
    expect(nacked?.scheduledAt.getTime()).toBeLessThanOrEqual(Date.now() + 1000);
    // Due now: the next claim takes the nacked job, not the snoozed one.
    expect(
      (await backend.runs.claim({ queues: [queue], limit: 2, workerId: null })).jobs.map((j) => j.id),
    ).toEqual([b.id]);
  });

  it("fenced items are not applied and change nothing: stale attempt, not processing, unknown id", async () => {
    const [reclaimed, cancelled] = await claimed(2);
    if (!reclaimed || !cancelled) throw new Error("expected two jobs");
    await backend.jobs.cancel(cancelled.id);
    const unknown = { ...reclaimed, id: randomUUID() };
    const results = await backend.runs.settle([
      done({ ...reclaimed, attempts: reclaimed.attempts - 1 }),
      requeue({ ...reclaimed, attempts: reclaimed.attempts + 1 }),
      deadLetter(cancelled),
      done(cancelled, 0),
      requeue(unknown),
    ]);
    expect(results).toEqual([false, false, false, false, false]);
    expect(await inspector.readJob(reclaimed.id)).toMatchObject({ status: "processing", attempts: 1 });
    expect(await inspector.readJob(cancelled.id)).toMatchObject({ status: "cancelled" });
    expect(await inspector.readDeadLetterJob(cancelled.id)).toBeNull();
  });

  it("a dead_letter item whose id already has a dead-letter row is skipped; its job row and the other items are intact", async () => {
    const [conflicting, moved, finished] = await claimed(3);
    if (!conflicting || !moved || !finished) throw new Error("expected three jobs");
    await insertDeadLetterRow(conflicting.id);
    const results = await backend.runs.settle([deadLetter(conflicting), deadLetter(moved), done(finished)]);
    expect(results).toEqual([false, true, true]);
    expect(await inspector.readJob(conflicting.id)).toMatchObject({ status: "processing", attempts: 1 });
    expect((await inspector.readDeadLetterJob(conflicting.id))?.jobName).toBe("older");
    expect(await inspector.readJob(moved.id)).toBeNull();
    expect(await inspector.readDeadLetterJob(moved.id)).toMatchObject({
      id: moved.id,
      jobName: moved.jobName,
      queue: moved.queue,
      attempts: 1,
      lastError: "boom",
      deadLetterReason: "permanent_failure",
      tags: null,
      originalCreatedAt: moved.createdAt,
    });
    expect((await inspector.readJob(finished.id))?.status).toBe("done");
  });

  it("a repeated id applies once: the first item wins", async () => {
    const [job] = await claimed(1);
    if (!job) throw new Error("expected a job");
    expect(await backend.runs.settle([done(job), deadLetter(job), done(job, 0)])).toEqual([
      true,
      false,
      false,
    ]);
    expect((await inspector.readJob(job.id))?.status).toBe("done");
    expect(await inspector.readDeadLetterJob(job.id)).toBeNull();
  });

  it("an empty settle writes nothing and answers []", async () => {
    statements = [];
    expect(await backend.runs.settle([])).toEqual([]);
    expect(statements).toHaveLength(0);
  });
});

describe("settle under the fault hook", () => {
  function faultyBackend(interrupt: () => DeadLetterInterrupt | undefined): PostgresBackend {
    return postgresBackendWithFaults(
      { connectionString: db.url },
      {},
      { interruptDeadLetterMove: interrupt },
    );
  }

  it("a connection killed mid-settle rejects and leaves every item as it was; the pool recovers", async () => {
    let armed = true;
    const faulty = faultyBackend(() =>
      armed
        ? async (_id, { pid }) => {
            await admin.query("SELECT pg_terminate_backend($1)", [pid]);
          }
        : undefined,
    );
    try {
      const [dead, finished] = await claimed(2, {}, faulty);
      if (!dead || !finished) throw new Error("expected two jobs");
      const items = [done(finished), deadLetter(dead)];
      await expect(faulty.runs.settle(items)).rejects.toMatchObject({ code: "SONIQ_BACKEND_ERROR" });
      expect(await inspector.readJob(dead.id)).toMatchObject({ status: "processing" });
      expect(await inspector.readDeadLetterJob(dead.id)).toBeNull();
      expect(await inspector.readJob(finished.id)).toMatchObject({ status: "processing" });
      armed = false;
      expect(await faulty.runs.settle(items)).toEqual([true, true]);
      expect(await inspector.readJob(dead.id)).toBeNull();
      expect((await inspector.readDeadLetterJob(dead.id))?.attempts).toBe(1);
      expect((await inspector.readJob(finished.id))?.status).toBe("done");
    } finally {
      await faulty.close();
    }
  });

  it("a hook that throws rolls the settle back", async () => {
    const faulty = faultyBackend(() => () => {
      throw new Error("injected");
    });
    try {
      const [job] = await claimed(1, {}, faulty);
      if (!job) throw new Error("expected a job");
      await expect(faulty.runs.settle([deadLetter(job)])).rejects.toThrow(/injected/);
      expect((await inspector.readJob(job.id))?.status).toBe("processing");
      expect(await inspector.readDeadLetterJob(job.id)).toBeNull();
    } finally {
      await faulty.close();
    }
  });

  it("is consulted only for settles that hold dead_letter items", async () => {
    let consulted = 0;
    const faulty = faultyBackend(() => {
      consulted++;
      return undefined;
    });
    try {
      const [a, b] = await claimed(2, {}, faulty);
      if (!a || !b) throw new Error("expected two jobs");
      expect(await faulty.runs.settle([done(a)])).toEqual([true]);
      expect(consulted).toBe(0);
      expect(await faulty.runs.settle([deadLetter(b)])).toEqual([true]);
      expect(consulted).toBe(1);
    } finally {
      await faulty.close();
    }
  });
});

describe("requeue after a dedup-key collision", () => {
  it("still requeues when a new queued job took the key; the new job keeps it", async () => {
    const queue = uniqueQueue();
    const first = newJob({ queue, dedupKey: `k-${randomUUID()}` });
    await backend.jobs.enqueue(first, {});
    const [job] = (await backend.runs.claim({ queues: [queue], limit: 1, workerId: null })).jobs;
    if (!job) throw new Error("expected a job");
    const second = await backend.jobs.enqueue(newJob({ queue, dedupKey: first.dedupKey }), {});
    expect(second.deduplicated).toBe(false);
    expect(await backend.runs.settle([requeue(job)])).toEqual([true]);
    expect(await inspector.readJob(first.id)).toMatchObject({ status: "queued", dedupKey: null });
    const third = await backend.jobs.enqueue(newJob({ queue, dedupKey: first.dedupKey }), {});
    expect(third).toEqual({ id: second.id, deduplicated: true });
  });

  it("requeues two processing jobs sharing a key in one settle", async () => {
    const key = `k-${randomUUID()}`;
    const queue = uniqueQueue();
    const a = newJob({ queue, dedupKey: key });
    await backend.jobs.enqueue(a, {});
    const [first] = (await backend.runs.claim({ queues: [queue], limit: 1, workerId: null })).jobs;
    const b = newJob({ queue, dedupKey: key });
    await backend.jobs.enqueue(b, {});
    const [second] = (await backend.runs.claim({ queues: [queue], limit: 1, workerId: null })).jobs;
    if (!first || !second) throw new Error("expected two jobs");
    expect(await backend.runs.settle([requeue(first), requeue(second)])).toEqual([true, true]);
    // Neither was queued when the statement started, so the key-clearing form cannot tell which keeps the
    // key; the last form drops both (a later enqueue with the key makes a new job).
    expect(await inspector.readJob(a.id)).toMatchObject({ status: "queued", dedupKey: null });
    expect(await inspector.readJob(b.id)).toMatchObject({ status: "queued", dedupKey: null });
  });
});

describe("claim", () => {
  it("returns a job already past its max_attempts (core dead-letters it), and the rest of the batch", async () => {
    const queue = uniqueQueue();
    const exhausted = newJob({ queue, maxAttempts: 2, priority: 0 });
    const fresh = newJob({ queue, priority: 1 });
    await backend.jobs.enqueueMany([exhausted, fresh], {});
    await admin.query("UPDATE soniq_jobs SET attempts = 2, last_error = 'crashed' WHERE id = $1", [
      exhausted.id,
    ]);
    const taken = (await backend.runs.claim({ queues: [queue], limit: 5, workerId: null })).jobs;
    expect(taken.map((j) => [j.id, j.attempts, j.maxAttempts])).toEqual([
      [exhausted.id, 3, 2],
      [fresh.id, 1, 3],
    ]);
    expect(await inspector.readJob(exhausted.id)).toMatchObject({
      status: "processing",
      lastError: "crashed",
    });
  });
});
