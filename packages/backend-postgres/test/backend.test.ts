/**
 * Postgres-specific behaviour the conformance kit cannot see: enqueueMany's shape, the DLQ move under a
 * killed connection, the claim's crash-loop guard, requeue after a dedup-key collision, error translation,
 * and asynchronous commits staying local to their statement.
 */
import { randomUUID } from "node:crypto";
import { isSoniqError } from "@soniq/core";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PostgresBackend, type PostgresBackendOptions, postgresBackend } from "../src/index.js";
import { postgresInspector } from "./inspector.js";
import { createMigratedDatabase, newJob, type TestDatabase } from "./pgdb.js";

let db: TestDatabase;
let admin: pg.Pool;
let backend: PostgresBackend;
let inspector: ReturnType<typeof postgresInspector>;

beforeAll(async () => {
  db = await createMigratedDatabase();
  admin = new pg.Pool({ connectionString: db.url });
  admin.on("error", () => {});
  backend = postgresBackend({ connectionString: db.url });
  inspector = postgresInspector(admin);
});
afterAll(async () => {
  await backend?.close();
  await admin?.end();
  await db?.drop();
});

function queueName(): string {
  return `q_${randomUUID().slice(0, 8)}`;
}

async function claimOne(queue: string) {
  const [job] = await backend.claim({ queues: [queue], limit: 1, workerId: null });
  if (!job) throw new Error("nothing claimed");
  return job;
}

describe("enqueueMany", () => {
  it("is all or nothing: one bad job in the batch leaves no row", async () => {
    const queue = queueName();
    const batch = [
      newJob({ queue }),
      newJob({ queue, dedupKey: randomUUID() }),
      newJob({ queue, priority: 2 ** 40 }),
    ];
    await expect(backend.enqueueMany(batch)).rejects.toMatchObject({ code: "SONIQ_BACKEND_ERROR" });
    expect((await backend.getQueueStats({ queue })).total).toBe(0);
  });

  it("returns results in input order across every kind of job, duplicates included", async () => {
    const queue = queueName();
    const key = randomUUID();
    const existing = await backend.enqueue(newJob({ queue, dedupKey: key }));
    const batch = [
      newJob({ queue }),
      newJob({ queue, dedupKey: key }),
      newJob({ queue, unique: true, argsHash: "u1" }),
      newJob({ queue, unique: true, argsHash: "u1", dedupKey: randomUUID() }),
      newJob({ queue, dedupKey: randomUUID(), unique: true, argsHash: "u2" }),
      newJob({ queue }),
    ];
    const results = await backend.enqueueMany(batch);
    expect(results).toEqual([
      { id: batch[0]?.id, deduplicated: false },
      { id: existing.id, deduplicated: true },
      { id: batch[2]?.id, deduplicated: false },
      { id: batch[2]?.id, deduplicated: true },
      { id: batch[4]?.id, deduplicated: false },
      { id: batch[5]?.id, deduplicated: false },
    ]);
    expect((await backend.getQueueStats({ queue })).queued).toBe(5);
  });
});

describe("dead-letter move", () => {
  it("moves in one statement: every field copied, job gone, dead-letter row id = job id", async () => {
    const queue = queueName();
    const job = newJob({ queue, args: { a: [1, 2] }, priority: 7, maxAttempts: 2 });
    await backend.enqueue(job);
    const claimed = await claimOne(queue);
    const moved = await backend.markJobDeadLetter(job.id, {
      reason: "permanent_failure",
      error: "boom",
      tags: { t: 1 },
      attempt: claimed.attempts,
    });
    expect(moved).toBe(true);
    expect(await inspector.readJob(job.id)).toBeNull();
    expect(await inspector.readDeadLetterJob(job.id)).toMatchObject({
      id: job.id,
      jobName: job.jobName,
      args: { a: [1, 2] },
      queue,
      priority: 7,
      maxAttempts: 2,
      attempts: 1,
      lastError: "boom",
      deadLetterReason: "permanent_failure",
      tags: { t: 1 },
      resurrectionCount: 0,
      originalCreatedAt: claimed.createdAt,
    });
  });

  it("a fenced move with a stale attempt changes nothing", async () => {
    const queue = queueName();
    const job = newJob({ queue });
    await backend.enqueue(job);
    const claimed = await claimOne(queue);
    const moved = await backend.markJobDeadLetter(job.id, {
      reason: "max_retries_exceeded",
      error: null,
      attempt: claimed.attempts + 1,
    });
    expect(moved).toBe(false);
    expect((await inspector.readJob(job.id))?.status).toBe("processing");
  });

  it("a conflicting dead-letter row fails the whole statement: SONIQ_DEAD_LETTER_CONFLICT, job intact", async () => {
    const queue = queueName();
    const job = newJob({ queue });
    await backend.enqueue(job);
    await admin.query(
      `INSERT INTO soniq_dead_letter_jobs (id, job_name, args, queue, priority, max_attempts, attempts,
         dead_letter_reason, original_created_at) VALUES ($1, 'x', '{}', $2, 1, 1, 1, 'permanent_failure', now())`,
      [job.id, queue],
    );
    const err = await backend
      .markJobDeadLetter(job.id, { reason: "permanent_failure", error: "e" })
      .catch((e: unknown) => e);
    expect(isSoniqError(err, "SONIQ_DEAD_LETTER_CONFLICT")).toBe(true);
    expect((await inspector.readJob(job.id))?.status).toBe("queued");
    expect((await inspector.readDeadLetterJob(job.id))?.jobName).toBe("x");
  });

  it("a connection killed between the insert and the delete leaves the pre-move state; a later move works", async () => {
    let interrupt = true;
    const faulty = postgresBackend(
      { connectionString: db.url },
      {
        testHooks: {
          interruptDeadLetterMove: () =>
            interrupt
              ? async (_id, { pid }) => {
                  await admin.query("SELECT pg_terminate_backend($1)", [pid]);
                }
              : undefined,
        },
      },
    );
    try {
      const queue = queueName();
      const job = newJob({ queue });
      await faulty.enqueue(job);
      const claimed = await claimOne(queue);
      const options = { reason: "max_retries_exceeded", error: "e", attempt: claimed.attempts };
      await expect(faulty.markJobDeadLetter(job.id, options)).rejects.toMatchObject({
        code: "SONIQ_BACKEND_ERROR",
      });
      expect((await inspector.readJob(job.id))?.status).toBe("processing");
      expect(await inspector.readDeadLetterJob(job.id)).toBeNull();
      // The pool still works after losing that connection, and the retried move completes.
      interrupt = false;
      expect(await faulty.markJobDeadLetter(job.id, options)).toBe(true);
      expect(await inspector.readJob(job.id)).toBeNull();
      expect((await inspector.readDeadLetterJob(job.id))?.attempts).toBe(1);
    } finally {
      await faulty.close();
    }
  });

  it("a hook that throws between the steps rolls the move back", async () => {
    const faulty = postgresBackend(
      { connectionString: db.url },
      {
        testHooks: {
          interruptDeadLetterMove: () => () => {
            throw new Error("injected");
          },
        },
      },
    );
    try {
      const job = newJob({ queue: queueName() });
      await faulty.enqueue(job);
      await expect(faulty.markJobDeadLetter(job.id, { reason: "r", error: null })).rejects.toThrow();
      expect((await inspector.readJob(job.id))?.status).toBe("queued");
      expect(await inspector.readDeadLetterJob(job.id)).toBeNull();
    } finally {
      await faulty.close();
    }
  });
});

describe("claim crash-loop guard", () => {
  it("dead-letters a job whose attempts already reached max_attempts instead of returning it", async () => {
    const queue = queueName();
    const job = newJob({ queue, maxAttempts: 2 });
    await backend.enqueue(job);
    await admin.query("UPDATE soniq_jobs SET attempts = 2, last_error = 'crashed' WHERE id = $1", [job.id]);
    expect(await backend.claim({ queues: [queue], limit: 5, workerId: null })).toEqual([]);
    expect(await inspector.readJob(job.id)).toBeNull();
    expect(await inspector.readDeadLetterJob(job.id)).toMatchObject({
      deadLetterReason: "max_retries_exceeded",
      attempts: 2,
      lastError: "crashed",
    });
  });
});

describe("requeue after a dedup-key collision", () => {
  it("retry still requeues the job when a new queued job took its dedup key; the new job keeps the key", async () => {
    const queue = queueName();
    const first = newJob({ queue, dedupKey: `k-${randomUUID()}` });
    await backend.enqueue(first);
    const claimed = await claimOne(queue);
    const second = await backend.enqueue(newJob({ queue, dedupKey: first.dedupKey }));
    expect(second.deduplicated).toBe(false);
    const retried = await backend.retry(
      { id: first.id, attempt: claimed.attempts },
      { error: "e", delayMs: 0 },
    );
    expect(retried).toBe(true);
    expect(await inspector.readJob(first.id)).toMatchObject({ status: "queued", dedupKey: null });
    const third = await backend.enqueue(newJob({ queue, dedupKey: first.dedupKey }));
    expect(third).toEqual({ id: second.id, deduplicated: true });
  });

  it("stale recovery requeues a unique job even when its twin is queued again", async () => {
    const queue = queueName();
    const workerId = randomUUID();
    await backend.registerWorker({
      id: workerId,
      hostname: "h",
      pid: 1,
      queues: [queue],
      concurrency: 1,
      version: null,
      metadata: null,
    });
    const job = newJob({ queue, unique: true, argsHash: "twin" });
    await backend.enqueue(job);
    await backend.claim({ queues: [queue], limit: 1, workerId });
    await backend.enqueue(newJob({ queue, unique: true, argsHash: "twin" }));
    await inspector.backdateWorkerHeartbeat(workerId, 60_000);
    const recovered = await backend.recoverStaleWorkers(30_000);
    expect(recovered).toEqual({ workerIds: [workerId], requeuedJobIds: [job.id] });
    expect((await inspector.readJob(job.id))?.status).toBe("queued");
  });
});

describe("errors", () => {
  it("malformed ids are not found, never an error", async () => {
    expect(await backend.getJob("not-a-uuid")).toBeNull();
    expect(await backend.cancel("nope")).toBe(false);
    expect(await backend.retry({ id: "x", attempt: 1 }, { error: "e", delayMs: 0 })).toBe(false);
    expect(await backend.complete([{ id: "x", attempt: 1, result: null, resultTtlMs: 10 }])).toBe(0);
    expect(await backend.markJobDeadLetter("x", { reason: "r", error: null })).toBe(false);
    expect(await backend.getDeadLetterJob("x")).toBeNull();
    expect(await backend.replayDeadLetterJob("x", { newId: randomUUID() })).toBeNull();
    expect(await backend.purgeDeadLetterJob("x")).toBe(false);
  });

  it("a raw status write to dead_letter becomes SONIQ_INVALID_STATUS_TRANSITION", async () => {
    const job = newJob({ queue: queueName() });
    await backend.enqueue(job);
    const err = await inspector.writeJobStatus(job.id, "dead_letter").catch((e: unknown) => e);
    expect(isSoniqError(err, "SONIQ_INVALID_STATUS_TRANSITION")).toBe(true);
  });

  it("claiming with an unregistered worker id is SONIQ_INVALID_ARGUMENT and claims nothing", async () => {
    const queue = queueName();
    await backend.enqueue(newJob({ queue }));
    const err = await backend.claim({ queues: [queue], limit: 1, workerId: randomUUID() }).catch((e) => e);
    expect(isSoniqError(err, "SONIQ_INVALID_ARGUMENT")).toBe(true);
    expect((await backend.getQueueStats({ queue })).queued).toBe(1);
  });

  it("rejects bad options with SONIQ_INVALID_OPTIONS", () => {
    expect(() => postgresBackend({ connectionString: "" })).toThrow(/connectionString/);
    expect(() => postgresBackend({} as { connectionString: string })).toThrow(/connectionString/);
    const bad = { testHooks: { interruptDeadLetterMove: 1 } } as unknown as PostgresBackendOptions;
    const err = (() => {
      try {
        postgresBackend({ connectionString: db.url }, bad);
      } catch (e) {
        return e;
      }
    })();
    expect(isSoniqError(err, "SONIQ_INVALID_OPTIONS")).toBe(true);
  });
});

describe("asynchronous commits", () => {
  it("claims and asyncOutcomes writes turn synchronous_commit off for their own transaction only", async () => {
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    pool.on("error", () => {});
    const single = postgresBackend({ pool }, { asyncOutcomes: true });
    const show = async () =>
      (await pool.query<{ synchronous_commit: string }>("SHOW synchronous_commit")).rows[0]
        ?.synchronous_commit;
    try {
      const queue = queueName();
      await single.enqueueMany([newJob({ queue }), newJob({ queue }), newJob({ queue })]);
      const [a, b, c] = await single.claim({ queues: [queue], limit: 3, workerId: null });
      expect(await show()).toBe("on");
      if (!a || !b || !c) throw new Error("expected three claimed jobs");
      expect(await single.complete([{ id: a.id, attempt: a.attempts, result: 1, resultTtlMs: 1000 }])).toBe(
        1,
      );
      expect(await single.retry({ id: b.id, attempt: b.attempts }, { error: "e", delayMs: 0 })).toBe(true);
      expect(await single.markJobDeadLetter(c.id, { reason: "r", error: null, attempt: c.attempts })).toBe(
        true,
      );
      expect(await show()).toBe("on");
      expect((await single.getQueueStats({ queue })).done).toBe(1);
    } finally {
      await single.close();
      await pool.end();
    }
  });

  it("rejects a non-boolean asyncOutcomes", () => {
    const bad = { asyncOutcomes: "yes" } as unknown as PostgresBackendOptions;
    expect(() => postgresBackend({ connectionString: db.url }, bad)).toThrow(/asyncOutcomes/);
  });
});
