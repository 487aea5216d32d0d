/** SQLite-specific behaviour the conformance kit does not see: ownership, pragmas, error translation. */
import { isSoniqError } from "@soniq/core";
import Database from "better-sqlite3";
import { sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { translateError } from "../src/errors.js";
import { sqliteBackend } from "../src/index.js";
import { eventually, newJob, tempDir } from "./helpers.js";

const tmp = tempDir();
afterAll(() => tmp.remove());

async function migrated(file = tmp.file(), options = {}) {
  const backend = sqliteBackend({ filename: file }, options);
  await backend.migrate();
  return backend;
}

describe("sqlite/connection", () => {
  it("configures WAL, synchronous=NORMAL, busy_timeout and foreign keys", async () => {
    const db = new Database(tmp.file());
    const backend = sqliteBackend({ database: db }, { busyTimeoutMs: 1234 });
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(db.pragma("synchronous", { simple: true })).toBe(1);
    expect(db.pragma("busy_timeout", { simple: true })).toBe(1234);
    expect(db.pragma("foreign_keys", { simple: true })).toBe(1);
    await backend.close();
    db.close();
  });

  it("never closes a Database it was handed", async () => {
    const db = new Database(tmp.file());
    const backend = sqliteBackend({ database: db });
    await backend.migrate();
    await backend.close();
    expect(db.open).toBe(true);
    expect(db.prepare("SELECT COUNT(*) AS n FROM soniq_jobs").get()).toEqual({ n: 0 });
    db.close();
  });

  it("closes what it opened; close is memoised and later calls reject with SONIQ_CLOSED", async () => {
    const backend = await migrated();
    const first = backend.close();
    expect(backend.close()).toBe(first);
    await first;
    const err = await backend.getJob("x").catch((e: unknown) => e);
    expect(isSoniqError(err, "SONIQ_CLOSED")).toBe(true);
  });

  it("waits busyTimeoutMs for another connection's write lock, then fails with SONIQ_BACKEND_ERROR", async () => {
    const file = tmp.file();
    const backend = await migrated(file, { busyTimeoutMs: 50 });
    await backend.enqueue(newJob());
    const holder = new Database(file);
    holder.exec("BEGIN IMMEDIATE");
    const started = Date.now();
    const err = await backend.claim({ queues: null, limit: 1, workerId: null }).catch((e: unknown) => e);
    expect(Date.now() - started).toBeGreaterThanOrEqual(40);
    expect(err).toMatchObject({ code: "SONIQ_BACKEND_ERROR", context: { sqliteCode: "SQLITE_BUSY" } });
    holder.exec("ROLLBACK");
    expect(await backend.claim({ queues: null, limit: 1, workerId: null })).toHaveLength(1);
    holder.close();
    await backend.close();
  });

  it("a file that cannot be opened is SONIQ_BACKEND_ERROR naming the path", () => {
    const filename = `${tmp.dir}/missing-dir/soniq.db`;
    expect(() => sqliteBackend({ filename })).toThrow(
      expect.objectContaining({ code: "SONIQ_BACKEND_ERROR", context: { filename } }),
    );
  });

  it("rejects bad options with every problem listed", () => {
    expect(() => sqliteBackend({} as never, { busyTimeoutMs: -1 })).toThrow(
      expect.objectContaining({ code: "SONIQ_INVALID_OPTIONS", context: { problems: expect.any(Array) } }),
    );
  });

  it("says to run setup when the schema is missing", async () => {
    const backend = sqliteBackend({ filename: tmp.file() });
    const err = await backend.enqueue(newJob()).catch((e: unknown) => e);
    expect(isSoniqError(err, "SONIQ_BACKEND_ERROR")).toBe(true);
    expect(String((err as Error).message)).toMatch(/setup\(\)/);
    await backend.close();
  });
});

describe("sqlite/error translation", () => {
  it("maps trigger and CHECK errors to SONIQ_INVALID_STATUS_TRANSITION, also inside drizzle's cause", async () => {
    const file = tmp.file();
    await (await migrated(file)).close();
    const db = new Database(file);
    db.prepare("INSERT INTO soniq_jobs (id, job_name, args, status) VALUES ('a', 'x', '{}', 'done')").run();
    const caught = (fn: () => unknown) => {
      try {
        fn();
      } catch (err) {
        return translateError(err, "test");
      }
      throw new Error("expected a throw");
    };
    const raw = caught(() => db.prepare("UPDATE soniq_jobs SET status = 'queued'").run());
    const check = caught(() => db.prepare("UPDATE soniq_jobs SET status = 'nope'").run());
    const wrapped = caught(() =>
      drizzle({ client: db }).run(sql`UPDATE soniq_jobs SET status = 'dead_letter'`),
    );
    for (const err of [raw, check, wrapped]) {
      expect(isSoniqError(err, "SONIQ_INVALID_STATUS_TRANSITION")).toBe(true);
      expect((err as Error).cause).toBeDefined();
    }
    db.close();
  });

  it("a dead-letter id collision is SONIQ_DEAD_LETTER_CONFLICT and leaves the job in place", async () => {
    const file = tmp.file();
    const backend = await migrated(file);
    const job = newJob();
    await backend.enqueue(job);
    const db = new Database(file);
    db.prepare(
      `INSERT INTO soniq_dead_letter_jobs (id, job_name, args, queue, priority, max_attempts, attempts,
        last_error, dead_letter_reason, original_created_at) VALUES (?, 'x', '{}', 'q', 1, 3, 3, 'old', 'x', 0)`,
    ).run(job.id);
    db.close();
    const err = await backend
      .markJobDeadLetter(job.id, { reason: "permanent_failure", error: "new" })
      .catch((e: unknown) => e);
    expect(isSoniqError(err, "SONIQ_DEAD_LETTER_CONFLICT")).toBe(true);
    expect((await backend.getJob(job.id))?.status).toBe("queued");
    expect((await backend.getDeadLetterJob(job.id))?.lastError).toBe("old");
    await backend.close();
  });
});

describe("sqlite/input errors", () => {
  it("values JSON cannot encode are rejected with a code before anything is written", async () => {
    const backend = await migrated();
    const err = await backend.enqueue(newJob({ args: { n: 1n } })).catch((e: unknown) => e);
    expect(isSoniqError(err, "SONIQ_TASK_ARGS_INVALID")).toBe(true);
    expect((await backend.getQueueStats()).total).toBe(0);

    await backend.enqueue(newJob());
    const [job] = await backend.claim({ queues: null, limit: 1, workerId: null });
    const ref = { id: String(job?.id), attempt: 1 };
    const badResult = await backend
      .complete([{ ...ref, result: { big: 2n }, resultTtlMs: 1000 }])
      .catch((e: unknown) => e);
    expect(isSoniqError(badResult, "SONIQ_INVALID_ARGUMENT")).toBe(true);
    const badTags = await backend
      .markJobDeadLetter(ref.id, { reason: "permanent_failure", error: null, tags: { big: 3n } })
      .catch((e: unknown) => e);
    expect(isSoniqError(badTags, "SONIQ_INVALID_ARGUMENT")).toBe(true);
    expect((await backend.getJob(ref.id))?.status).toBe("processing");
    await backend.close();
  });
});

describe("sqlite/workers", () => {
  it("recovery also takes back jobs a stopped worker still holds, once its heartbeat is past the threshold", async () => {
    const file = tmp.file();
    const backend = await migrated(file);
    await backend.registerWorker({
      id: "w",
      hostname: "h",
      pid: 1,
      queues: [],
      concurrency: 1,
      version: null,
      metadata: null,
    });
    const job = newJob();
    await backend.enqueue(job);
    await backend.claim({ queues: null, limit: 1, workerId: "w" });
    await backend.stopWorker("w"); // its give-back never happened
    expect(await backend.recoverStaleWorkers(60_000)).toEqual({ workerIds: [], requeuedJobIds: [] });
    const db = new Database(file);
    db.prepare("UPDATE soniq_workers SET last_heartbeat = last_heartbeat - 120000").run();
    db.close();
    expect(await backend.recoverStaleWorkers(60_000)).toEqual({ workerIds: [], requeuedJobIds: [job.id] });
    expect((await backend.getJob(job.id))?.status).toBe("queued");
    await backend.close();
  });
});

describe("sqlite/enqueue ids", () => {
  it("an id that already exists rejects the whole enqueueMany with SONIQ_INVALID_ARGUMENT", async () => {
    const backend = await migrated();
    const first = newJob();
    await backend.enqueue(first);
    const fresh = newJob();
    const err = await backend.enqueueMany([fresh, { ...newJob(), id: first.id }]).catch((e: unknown) => e);
    expect(isSoniqError(err, "SONIQ_INVALID_ARGUMENT")).toBe(true);
    expect(await backend.getJob(fresh.id)).toBeNull();
    await backend.close();
  });
});

describe("sqlite/fault hook", () => {
  it("a fault between insert and delete rolls the savepoint back: the job stays, no dead-letter row", async () => {
    let broken = true;
    const backend = await migrated(tmp.file(), { faults: { breakDeadLetterMove: () => broken } });
    const job = newJob();
    await backend.enqueue(job);
    await expect(
      backend.markJobDeadLetter(job.id, { reason: "permanent_failure", error: "e" }),
    ).rejects.toThrow(/injected fault/);
    expect((await backend.getJob(job.id))?.status).toBe("queued");
    expect(await backend.getDeadLetterJob(job.id)).toBeNull();
    broken = false;
    expect(await backend.markJobDeadLetter(job.id, { reason: "permanent_failure", error: "e" })).toBe(true);
    expect(await backend.getJob(job.id)).toBeNull();
    expect((await backend.getDeadLetterJob(job.id))?.lastError).toBe("e");
    await backend.close();
  });
});

describe("sqlite/claim", () => {
  it("dead-letters over-attempted rows and fills the batch from the rows after them", async () => {
    const backend = await migrated();
    const tired = newJob({ maxAttempts: 1, priority: 1 });
    await backend.enqueue(tired);
    const [first] = await backend.claim({ queues: ["default"], limit: 1, workerId: null });
    expect(await backend.nack({ id: tired.id, attempt: first?.attempts ?? 0 })).toBe(true);
    const fresh = newJob({ priority: 2 });
    await backend.enqueue(fresh);
    const claimed = await backend.claim({ queues: ["default"], limit: 1, workerId: null });
    expect(claimed.map((j) => j.id)).toEqual([fresh.id]);
    expect(await backend.getDeadLetterJob(tired.id)).toMatchObject({
      deadLetterReason: "max_retries_exceeded",
      attempts: 1,
    });
    await backend.close();
  });

  it("merges several queues in priority, scheduled_at, creation order (listed, all, and many queues)", async () => {
    const backend = await migrated();
    const past = (ms: number) => new Date(Date.now() - ms);
    const a1 = newJob({ queue: "a", priority: 5, scheduledAt: past(1000) });
    const b1 = newJob({ queue: "b", priority: 1, scheduledAt: past(500) });
    const a2 = newJob({ queue: "a", priority: 1, scheduledAt: past(900) });
    const c1 = newJob({ queue: "c", priority: 1, scheduledAt: past(900) });
    const later = newJob({ queue: "b", priority: 0, scheduledAt: new Date(Date.now() + 60_000) });
    await backend.enqueueMany([a1, b1, a2, c1, later]);
    const listed = await backend.claim({ queues: ["a", "b", "a"], limit: 5, workerId: null });
    expect(listed.map((j) => j.id)).toEqual([a2.id, b1.id, a1.id]);
    const all = await backend.claim({ queues: null, limit: 5, workerId: null });
    expect(all.map((j) => j.id)).toEqual([c1.id]);

    // More queues than the per-queue merge handles: one sorted scan, same order.
    const many = Array.from({ length: 40 }, (_, i) => newJob({ queue: `q${i}`, priority: 40 - i }));
    await backend.enqueueMany(many);
    const fromList = await backend.claim({ queues: many.map((j) => j.queue), limit: 3, workerId: null });
    expect(fromList.map((j) => j.id)).toEqual([many[39]?.id, many[38]?.id, many[37]?.id]);
    const fromAll = await backend.claim({ queues: null, limit: 3, workerId: null });
    expect(fromAll.map((j) => j.id)).toEqual([many[36]?.id, many[35]?.id, many[34]?.id]);
    await backend.close();
  });

  it("two backend objects on one file never claim the same job", async () => {
    const file = tmp.file();
    const a = await migrated(file);
    const b = sqliteBackend({ filename: file });
    await a.enqueueMany(Array.from({ length: 200 }, () => newJob()));
    const seen: string[] = [];
    for (let i = 0; i < 40; i++) {
      const [x, y] = await Promise.all([
        a.claim({ queues: null, limit: 3, workerId: null }),
        b.claim({ queues: null, limit: 3, workerId: null }),
      ]);
      seen.push(...x.map((j) => j.id), ...y.map((j) => j.id));
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toHaveLength(200);
    await a.close();
    await b.close();
  });
});

describe("sqlite/requeue and dedup keys", () => {
  it("stale recovery requeues two running jobs with one dedup_key: the second gives the key up", async () => {
    const file = tmp.file();
    const backend = await migrated(file);
    const worker = {
      id: "w1",
      hostname: "h",
      pid: 1,
      queues: [],
      concurrency: 2,
      version: null,
      metadata: null,
    };
    await backend.registerWorker(worker);
    const first = newJob({ dedupKey: "k" });
    await backend.enqueue(first);
    await backend.claim({ queues: ["default"], limit: 1, workerId: "w1" });
    const second = newJob({ dedupKey: "k" });
    expect(await backend.enqueue(second)).toEqual({ id: second.id, deduplicated: false });
    await backend.claim({ queues: ["default"], limit: 1, workerId: "w1" });
    const db = new Database(file);
    db.prepare("UPDATE soniq_workers SET last_heartbeat = last_heartbeat - 60000").run();
    db.close();
    const recovered = await backend.recoverStaleWorkers(1000);
    expect(recovered.requeuedJobIds.sort()).toEqual([first.id, second.id].sort());
    const keys = await Promise.all(
      [first.id, second.id].map(async (id) => (await backend.getJob(id))?.dedupKey),
    );
    expect(keys.sort()).toEqual(["k", null].sort());
    expect((await backend.enqueue(newJob({ dedupKey: "k" }))).deduplicated).toBe(true);
    await backend.close();
  });
});

describe("sqlite/leases", () => {
  it("one holder at a time across two connections; renew, release and expiry", async () => {
    const file = tmp.file();
    const a = await migrated(file);
    const b = sqliteBackend({ filename: file });
    expect(await a.tryAcquireLease("scheduler", "a", 60_000)).toBe(true);
    expect(await b.tryAcquireLease("scheduler", "b", 60_000)).toBe(false);
    expect(await a.tryAcquireLease("scheduler", "a", 60_000)).toBe(true);
    await b.releaseLease("scheduler", "b");
    expect(await b.tryAcquireLease("scheduler", "b", 60_000)).toBe(false);
    await a.releaseLease("scheduler", "a");
    expect(await b.tryAcquireLease("scheduler", "b", 1)).toBe(true);
    const db = new Database(file);
    db.prepare("UPDATE soniq_leases SET expires_at = expires_at - 1000").run();
    db.close();
    expect(await a.tryAcquireLease("scheduler", "a", 60_000)).toBe(true);
    await a.close();
    await b.close();
  });
});

describe("sqlite/lease expiry", () => {
  // The kit's leases/expire-after-ttl runs only for advisoryLocks: false (session-scoped Postgres locks do
  // not expire); SQLite leases are rows with an expiry, so the behaviour is checked here.
  it("a lease that is not renewed expires after its TTL and another holder takes it", async () => {
    const file = tmp.file();
    const a = await migrated(file);
    const b = sqliteBackend({ filename: file });
    expect(await a.tryAcquireLease("leader", "a", 200)).toBe(true);
    expect(await b.tryAcquireLease("leader", "b", 60_000)).toBe(false);
    await eventually(() => b.tryAcquireLease("leader", "b", 60_000), 5000, 25);
    expect(await a.tryAcquireLease("leader", "a", 60_000)).toBe(false);
    await a.close();
    await b.close();
  });
});

describe("sqlite/wake-ups", () => {
  it("subscribers of the backend object hear enqueues after the write; unsubscribe stops them", async () => {
    const backend = await migrated();
    const heard: string[] = [];
    const unsubscribe = await backend.subscribe((queue) => heard.push(queue));
    await backend.enqueue(newJob({ queue: "emails" }));
    await Promise.resolve();
    expect(heard).toEqual(["emails"]);
    await unsubscribe();
    await backend.enqueue(newJob({ queue: "emails" }));
    await Promise.resolve();
    expect(heard).toEqual(["emails"]);
    await backend.close();
  });
});
