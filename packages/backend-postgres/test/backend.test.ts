/**
 * Postgres-specific behaviour the conformance kit cannot see: enqueueMany's shape, settle as one statement
 * (every outcome kind, fences, dead-letter conflicts, a killed connection mid-settle), requeues after a
 * dedup-key collision, stale recovery, error translation, and asynchronous commits staying local to their
 * statement.
 */
import { randomUUID } from "node:crypto";
import { postgresBackendWithFaults } from "@soniq/backend-postgres/testing";
import { isSoniqError } from "@soniq/core/backend";
import { uniqueQueue } from "@soniq/testkit";
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

describe("enqueueMany", () => {
  it("is all or nothing: one bad job in the batch leaves no row", async () => {
    const queue = uniqueQueue();
    const batch = [
      newJob({ queue }),
      newJob({ queue, dedupKey: randomUUID() }),
      newJob({ queue, priority: 2 ** 40 }),
    ];
    await expect(backend.jobs.enqueueMany(batch, {})).rejects.toMatchObject({ code: "SONIQ_BACKEND_ERROR" });
    expect((await backend.jobs.stats({ queue })).total).toBe(0);
  });

  it("returns results in input order across every kind of job, duplicates included", async () => {
    const queue = uniqueQueue();
    const key = randomUUID();
    const existing = await backend.jobs.enqueue(newJob({ queue, dedupKey: key }), {});
    const batch = [
      newJob({ queue }),
      newJob({ queue, dedupKey: key }),
      newJob({ queue, unique: true, argsHash: "u1" }),
      newJob({ queue, unique: true, argsHash: "u1", dedupKey: randomUUID() }),
      newJob({ queue, dedupKey: randomUUID(), unique: true, argsHash: "u2" }),
      newJob({ queue }),
    ];
    const results = await backend.jobs.enqueueMany(batch, {});
    expect(results).toEqual([
      { id: batch[0]?.id, deduplicated: false },
      { id: existing.id, deduplicated: true },
      { id: batch[2]?.id, deduplicated: false },
      { id: batch[2]?.id, deduplicated: true },
      { id: batch[4]?.id, deduplicated: false },
      { id: batch[5]?.id, deduplicated: false },
    ]);
    expect((await backend.jobs.stats({ queue })).queued).toBe(5);
  });

  it("a batch of plain jobs stores every row under the id it was sent with, args and queue included", async () => {
    const [q1, q2] = [uniqueQueue(), uniqueQueue()];
    const batch = Array.from({ length: 50 }, (_, i) => newJob({ queue: i % 2 ? q1 : q2, args: { i } }));
    const results = await backend.jobs.enqueueMany(batch, {});
    expect(results).toEqual(batch.map((job) => ({ id: job.id, deduplicated: false })));
    const stored = await admin.query<{ id: string; queue: string; args: { i: number } }>(
      "SELECT id, queue, args FROM soniq_jobs WHERE queue IN ($1, $2) AND status = 'queued' ORDER BY (args->>'i')::int",
      [q1, q2],
    );
    expect(stored.rows).toEqual(batch.map((job) => ({ id: job.id, queue: job.queue, args: job.args })));
  });

  it("a plain batch stores each row as a single enqueue of the same job would, column by column", async () => {
    // The batch sends each column as an array (all-null columns as no array at all) and the args as one JSON
    // array read by position: every column must land on its own row, whichever rows set it.
    const [single, batched] = [uniqueQueue(), uniqueQueue()];
    const at = new Date(Date.now() + 3_600_000);
    const shapes: Partial<Parameters<typeof newJob>[0]>[] = [
      { args: null },
      { args: 'text with "quotes", a \\ and ünïcödé' },
      { args: [1, { nested: [true, null] }], priority: 7, maxAttempts: 9, jobName: 'shape "other", {x}' },
      { args: {}, scheduledAt: at, group: "g-1", producerId: "producer-1" },
      { args: { "{,}": "an array literal's own characters" }, argsHash: "h", traceId: "t-1", group: "g-1" },
      { args: 42, traceContext: { traceparent: "00-abc-def-01" }, group: 'a "quoted" \\ {group}, NULL' },
      // Text an array literal could misread: the word NULL, an empty string, braces, commas, backslashes.
      { producerId: "NULL", traceId: "", group: "g-1", priority: -3 },
      { producerId: "\\", traceId: "{}", group: ",", jobName: 'shape "other", {x}' },
    ];
    const row = (queue: string, i: number) => newJob({ queue, ...shapes[i] });
    for (let i = 0; i < shapes.length; i++) await backend.jobs.enqueue(row(single, i), {});
    await backend.jobs.enqueueMany(
      shapes.map((_, i) => row(batched, i)),
      {},
    );
    // Only rows that set none of the optional columns: each all-null column goes as a null array.
    await backend.jobs.enqueueMany([row(batched, 0), row(batched, 1)], {});
    await backend.jobs.enqueue(row(single, 0), {});
    await backend.jobs.enqueue(row(single, 1), {});
    const columns = `job_name, args, args_hash, priority, max_attempts, scheduled_at = $2 AS at_set,
      scheduled_at <= now() AS due, dedup_key, unique_job, producer_id, "group", trace_id, trace_context, status`;
    const read = async (queue: string) =>
      (
        await admin.query(`SELECT ${columns} FROM soniq_jobs WHERE queue = $1 ORDER BY created_at, id`, [
          queue,
          at,
        ])
      ).rows;
    const expected = await read(single);
    expect(expected).toHaveLength(shapes.length + 2);
    expect(await read(batched)).toEqual(expected);
  });

  it("a plain batch that repeats a stored id fails whole: no row of it is written", async () => {
    const queue = uniqueQueue();
    const first = newJob({ queue });
    await backend.jobs.enqueue(first, {});
    const batch = [newJob({ queue }), { ...newJob({ queue }), id: first.id }, newJob({ queue })];
    await expect(backend.jobs.enqueueMany(batch, {})).rejects.toMatchObject({
      code: "SONIQ_INVALID_ARGUMENT",
      message: expect.stringContaining("already exists"),
    });
    expect((await backend.jobs.stats({ queue })).total).toBe(1);
  });

  it("a plain batch with upper-case ids answers them as PostgreSQL prints them", async () => {
    const queue = uniqueQueue();
    const batch = [newJob({ queue }), newJob({ queue })].map((job) => ({ ...job, id: job.id.toUpperCase() }));
    const results = await backend.jobs.enqueueMany(batch, {});
    expect(results).toEqual(batch.map((job) => ({ id: job.id.toLowerCase(), deduplicated: false })));
  });

  it("a plain batch wakes each of its queues", async () => {
    const [q1, q2] = [uniqueQueue(), uniqueQueue()];
    const woken: string[] = [];
    const unsubscribe = await backend.wakeUps.subscribe((queue) => woken.push(queue));
    try {
      await backend.jobs.enqueueMany(
        [newJob({ queue: q1 }), newJob({ queue: q2 }), newJob({ queue: q1 })],
        {},
      );
      await expect
        .poll(() => [...new Set(woken)].filter((q) => q === q1 || q === q2).sort())
        .toEqual([q1, q2].sort());
    } finally {
      await unsubscribe();
    }
  });
});

async function registerWorker(queue: string): Promise<string> {
  const id = randomUUID();
  await backend.workers.register({
    id,
    hostname: "h",
    pid: 1,
    queues: [queue],
    concurrency: 1,
    version: null,
    metadata: null,
  });
  return id;
}

async function enqueueAndClaim(queue: string, workerId: string | null, overrides = {}) {
  const job = newJob({ queue, ...overrides });
  await backend.jobs.enqueue(job, {});
  const [claimed] = (await backend.runs.claim({ queues: [queue], limit: 1, workerId })).jobs;
  if (!claimed || claimed.id !== job.id) throw new Error("expected to claim the job just enqueued");
  return claimed;
}

describe("workers.recoverStale", () => {
  // One recovery sees the whole table, so each case checks its own ids within the answer.
  it("stops stale workers and requeues the jobs of stale, stopped and missing workers, nothing else", async () => {
    const queue = uniqueQueue();
    const stale = await registerWorker(queue);
    const stopped = await registerWorker(queue);
    const missing = await registerWorker(queue);
    const alive = await registerWorker(queue);
    const ofStale = await enqueueAndClaim(queue, stale, { priority: 1 });
    const ofStopped = await enqueueAndClaim(queue, stopped, { priority: 2 });
    const ofMissing = await enqueueAndClaim(queue, missing, { priority: 3 });
    const ofAlive = await enqueueAndClaim(queue, alive, { priority: 4 });
    const ofNobody = await enqueueAndClaim(queue, null, { priority: 5 });
    await backend.workers.stop(stopped);
    await admin.query("DELETE FROM soniq_workers WHERE id = $1", [missing]);
    await inspector.backdateWorkerHeartbeat(stale, 60_000);

    const recovered = await backend.workers.recoverStale(30_000);
    expect(recovered.workerIds).toContain(stale);
    expect(recovered.workerIds).not.toContain(alive);
    expect(recovered.requeuedJobIds).toEqual(
      expect.arrayContaining([ofStale.id, ofStopped.id, ofMissing.id]),
    );
    expect(recovered.requeuedJobIds).not.toContain(ofAlive.id);
    expect(recovered.requeuedJobIds).not.toContain(ofNobody.id);
    for (const job of [ofStale, ofStopped, ofMissing]) {
      expect(await inspector.readJob(job.id)).toMatchObject({
        status: "queued",
        attempts: 1,
        workerId: null,
      });
    }
    expect(await inspector.readJob(ofAlive.id)).toMatchObject({ status: "processing", workerId: alive });
    expect(await inspector.readJob(ofNobody.id)).toMatchObject({ status: "processing", workerId: null });
    expect((await backend.workers.list()).find((w) => w.id === stale)?.status).toBe("stopped");
    expect(await backend.workers.heartbeat(stale, null)).toBe(false);
    // The requeued jobs are due now.
    const again = (await backend.runs.claim({ queues: [queue], limit: 10, workerId: null })).jobs;
    expect(again.map((j) => j.id)).toEqual([ofStale.id, ofStopped.id, ofMissing.id]);
    // A second run finds nothing more of this case's.
    const second = await backend.workers.recoverStale(30_000);
    expect(second.workerIds).not.toContain(stale);
    expect(second.requeuedJobIds).not.toContain(ofStale.id);
  });

  it("requeues a unique job even when its twin is queued again", async () => {
    const queue = uniqueQueue();
    const workerId = await registerWorker(queue);
    const job = await enqueueAndClaim(queue, workerId, { unique: true, argsHash: "twin" });
    await backend.jobs.enqueue(newJob({ queue, unique: true, argsHash: "twin" }), {});
    await inspector.backdateWorkerHeartbeat(workerId, 60_000);
    const recovered = await backend.workers.recoverStale(30_000);
    expect(recovered.workerIds).toContain(workerId);
    expect(recovered.requeuedJobIds).toContain(job.id);
    expect(await inspector.readJob(job.id)).toMatchObject({ status: "queued", uniqueJob: false });
  });
});

describe("errors", () => {
  it("a raw status write to dead_letter becomes SONIQ_INVALID_STATUS_TRANSITION", async () => {
    const job = newJob({ queue: uniqueQueue() });
    await backend.jobs.enqueue(job, {});
    const err = await inspector.writeJobStatus(job.id, "dead_letter").catch((e: unknown) => e);
    expect(isSoniqError(err, "SONIQ_INVALID_STATUS_TRANSITION")).toBe(true);
  });

  it("claiming with an unregistered worker id is SONIQ_INVALID_ARGUMENT and claims nothing", async () => {
    const queue = uniqueQueue();
    await backend.jobs.enqueue(newJob({ queue }), {});
    const err = await backend.runs
      .claim({ queues: [queue], limit: 1, workerId: randomUUID() })
      .catch((e) => e);
    expect(isSoniqError(err, "SONIQ_INVALID_ARGUMENT")).toBe(true);
    expect((await backend.jobs.stats({ queue })).queued).toBe(1);
  });

  it("a dead-letter row inserted by something else while a settle runs fails the settle as a whole: SONIQ_DEAD_LETTER_CONFLICT", async () => {
    const queue = uniqueQueue();
    const job = await enqueueAndClaim(queue, null);
    const other = new pg.Client({ connectionString: db.url });
    await other.connect();
    try {
      // The other transaction holds the conflicting id uncommitted: the settle's NOT EXISTS cannot see it,
      // its INSERT waits on it and fails once it commits.
      await other.query("BEGIN");
      await other.query(
        `INSERT INTO soniq_dead_letter_jobs (id, job_name, args, queue, priority, max_attempts, attempts,
           dead_letter_reason, original_created_at) VALUES ($1, 'x', '{}', $2, 1, 1, 1, 'permanent_failure', now())`,
        [job.id, queue],
      );
      const settling = backend.runs
        .settle([
          {
            kind: "dead_letter",
            id: job.id,
            attempt: job.attempts,
            reason: "permanent_failure",
            error: null,
            tags: null,
          },
        ])
        .catch((e: unknown) => e);
      await waitForLockWait();
      await other.query("COMMIT");
      expect(isSoniqError(await settling, "SONIQ_DEAD_LETTER_CONFLICT")).toBe(true);
      expect(await inspector.readJob(job.id)).toMatchObject({ status: "processing" });
      expect((await inspector.readDeadLetterJob(job.id))?.jobName).toBe("x");
    } finally {
      await other.end();
    }
  });

  it("rejects bad options with SONIQ_INVALID_OPTIONS", () => {
    expect(() => postgresBackend({ connectionString: "" })).toThrow(/connectionString/);
    expect(() => postgresBackend({} as { connectionString: string })).toThrow(/connectionString/);
    // testHooks: the fault hook lives in the /testing entry only, so the main entry refuses it.
    const bad = {
      testHooks: { interruptDeadLetterMove: () => undefined },
    } as unknown as PostgresBackendOptions;
    const err = (() => {
      try {
        postgresBackend({ connectionString: db.url }, bad);
      } catch (e) {
        return e;
      }
    })();
    expect(isSoniqError(err, "SONIQ_INVALID_OPTIONS")).toBe(true);
    expect(err).toMatchObject({
      context: {
        problems: [
          'no option "testHooks" (it takes preparedStatements, listen, listenConnectionString, ' +
            "readConnectionString, asyncOutcomes)",
        ],
      },
    });
    const faults = { interruptDeadLetterMove: 1 } as never;
    expect(() => postgresBackendWithFaults({ connectionString: db.url }, {}, faults)).toThrow(
      expect.objectContaining({
        code: "SONIQ_INVALID_OPTIONS",
        context: { problems: ["interruptDeadLetterMove must be a function"] },
      }),
    );
  });
});

/** Until some session of this database waits on a lock (the settle, blocked on the uncommitted row). */
async function waitForLockWait(): Promise<void> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const res = await admin.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
    );
    if ((res.rows[0]?.n ?? 0) > 0) return;
    if (Date.now() > deadline) throw new Error("the settle never waited on the conflicting row");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("asynchronous commits", () => {
  it("claims and asyncOutcomes settles turn synchronous_commit off for their own transaction only", async () => {
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    pool.on("error", () => {});
    const single = postgresBackend({ pool }, { asyncOutcomes: true });
    const show = async () =>
      (await pool.query<{ synchronous_commit: string }>("SHOW synchronous_commit")).rows[0]
        ?.synchronous_commit;
    try {
      const queue = uniqueQueue();
      await single.jobs.enqueueMany([newJob({ queue }), newJob({ queue }), newJob({ queue })], {});
      const [a, b, c] = (await single.runs.claim({ queues: [queue], limit: 3, workerId: null })).jobs;
      expect(await show()).toBe("on");
      if (!a || !b || !c) throw new Error("expected three claimed jobs");
      const results = await single.runs.settle([
        { kind: "done", id: a.id, attempt: a.attempts, result: 1, resultTtlMs: 1000 },
        {
          kind: "requeue",
          id: b.id,
          attempt: b.attempts,
          cause: "retry",
          attempts: 1,
          delayMs: 0,
          lastError: "e",
        },
        {
          kind: "dead_letter",
          id: c.id,
          attempt: c.attempts,
          reason: "permanent_failure",
          error: null,
          tags: null,
        },
      ]);
      expect(results).toEqual([true, true, true]);
      expect(await show()).toBe("on");
      expect(await single.jobs.stats({ queue })).toMatchObject({ done: 1, queued: 1, dead_letter: 1 });
    } finally {
      await single.close();
      await pool.end();
    }
  });

  it('durability "async" enqueues (one, keyed, batches) commit with synchronous_commit off; durable ones and a caller\'s transaction do not', async () => {
    // A deferred constraint trigger runs at commit: it records the setting the enqueue's transaction commits with.
    await admin.query(`CREATE TABLE IF NOT EXISTS enqueue_commit_mode (id uuid PRIMARY KEY, mode text NOT NULL);
      CREATE OR REPLACE FUNCTION record_enqueue_commit_mode() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO enqueue_commit_mode VALUES (NEW.id, current_setting('synchronous_commit'));
        RETURN NULL;
      END $$;
      CREATE CONSTRAINT TRIGGER enqueue_commit_mode AFTER INSERT ON soniq_jobs
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION record_enqueue_commit_mode();`);
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    pool.on("error", () => {});
    const backend = postgresBackend({ pool });
    const mode = async (id: string) =>
      (await admin.query<{ mode: string }>("SELECT mode FROM enqueue_commit_mode WHERE id = $1", [id]))
        .rows[0]?.mode;
    try {
      const queue = uniqueQueue();
      const async = { durability: "async" } as const;
      const one = newJob({ queue });
      const keyed = newJob({ queue, dedupKey: `k-${one.id}` });
      const plain = [newJob({ queue }), newJob({ queue })];
      const mixed = [newJob({ queue }), newJob({ queue, dedupKey: `m-${one.id}` })];
      const durable = newJob({ queue });
      const inTx = newJob({ queue });
      await backend.jobs.enqueue(one, async);
      await backend.jobs.enqueue(keyed, async);
      await backend.jobs.enqueueMany(plain, async);
      await backend.jobs.enqueueMany(mixed, async);
      await backend.jobs.enqueue(durable, {});
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        await backend.jobs.enqueue(inTx, { tx: client, durability: "async" });
        await client.query("COMMIT");
      } finally {
        client.release();
      }
      for (const job of [one, keyed, ...plain, ...mixed]) expect(await mode(job.id)).toBe("off");
      expect(await mode(durable.id)).toBe("on");
      expect(await mode(inTx.id)).toBe("on");
      // Only those transactions: the session's own setting is untouched.
      expect(
        (await pool.query<{ s: string }>("SELECT current_setting('synchronous_commit') AS s")).rows[0]?.s,
      ).toBe("on");
      expect(await backend.jobs.stats({ queue })).toMatchObject({ queued: 8 });
    } finally {
      await admin.query("DROP TRIGGER enqueue_commit_mode ON soniq_jobs");
      await backend.close();
      await pool.end();
    }
  });

  it("rejects a non-boolean asyncOutcomes", () => {
    const bad = { asyncOutcomes: "yes" } as unknown as PostgresBackendOptions;
    expect(() => postgresBackend({ connectionString: db.url }, bad)).toThrow(/asyncOutcomes/);
  });
});
