/** SQLite-specific behaviour the conformance kit does not see: ownership, pragmas, error translation, claims. */
import { sqliteBackendWithFaults } from "@soniq/backend-sqlite/testing";
import { isSoniqError } from "@soniq/core/backend";
import { eventually, newJob } from "@soniq/testkit";
import Database from "better-sqlite3";
import { sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { sqliteBackend } from "../src/index.js";
import { translateError } from "../src/internal/errors.js";
import { migrated, tempDir, worker } from "./helpers.js";

const tmp = tempDir();
afterAll(() => tmp.remove());

const claimAll = { queues: null, limit: 10, workerId: null } as const;

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
    await backend.migrations.apply();
    await backend.close();
    expect(db.open).toBe(true);
    expect(db.prepare("SELECT COUNT(*) AS n FROM soniq_jobs").get()).toEqual({ n: 0 });
    db.close();
  });

  it("closes the connection it opened, once: close is memoised", async () => {
    const backend = await migrated(tmp.file());
    const first = backend.close();
    expect(backend.close()).toBe(first);
    await first;
    // Unguarded, the backend reports the driver's own error (core's guard answers SONIQ_CLOSED first).
    await expect(backend.jobs.get(newJob().id)).rejects.toThrow(/not open/);
  });

  it("waits busyTimeoutMs for another connection's write lock, then fails with SONIQ_BACKEND_ERROR", async () => {
    const file = tmp.file();
    const backend = await migrated(file, { busyTimeoutMs: 50 });
    await backend.jobs.enqueue(newJob(), {});
    const holder = new Database(file);
    holder.exec("BEGIN IMMEDIATE");
    const err = await backend.runs.claim(claimAll).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "SONIQ_BACKEND_ERROR", context: { sqliteCode: "SQLITE_BUSY" } });
    holder.exec("ROLLBACK");
    expect((await backend.runs.claim(claimAll)).jobs).toHaveLength(1);
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
    // testHooks: the fault hook lives in the /testing entry only, so the main entry refuses it.
    const bad = { busyTimeoutMs: -1, testHooks: { interruptDeadLetterMove: () => true } } as never;
    expect(() => sqliteBackend({} as never, bad)).toThrow(
      expect.objectContaining({
        code: "SONIQ_INVALID_OPTIONS",
        context: {
          problems: [
            "pass exactly one of { filename } or { database }",
            'no option "testHooks" (it takes busyTimeoutMs, configureDatabase)',
            "busyTimeoutMs must be an integer >= 0",
          ],
        },
      }),
    );
    const faults = { interruptDeadLetterMove: true, dropConnection: () => true } as never;
    expect(() => sqliteBackendWithFaults({ filename: tmp.file() }, {}, faults)).toThrow(
      expect.objectContaining({
        code: "SONIQ_INVALID_OPTIONS",
        context: {
          problems: [
            'no fault "dropConnection" (it takes interruptDeadLetterMove)',
            "interruptDeadLetterMove must be a function",
          ],
        },
      }),
    );
  });

  it("says to run setup when the schema is missing", async () => {
    const backend = sqliteBackend({ filename: tmp.file() });
    const err = await backend.jobs.enqueue(newJob(), {}).catch((e: unknown) => e);
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
});

describe("sqlite/input errors", () => {
  it("values JSON cannot encode are rejected with a code before anything is written", async () => {
    const backend = await migrated(tmp.file());
    const err = await backend.jobs.enqueue(newJob({ args: { n: 1n } }), {}).catch((e: unknown) => e);
    expect(isSoniqError(err, "SONIQ_TASK_ARGS_INVALID")).toBe(true);
    expect((await backend.jobs.stats({ queue: null })).total).toBe(0);

    const ok = newJob();
    await backend.jobs.enqueue(ok, {});
    const [job] = (await backend.runs.claim(claimAll)).jobs;
    const ref = { id: ok.id, attempt: job?.attempts ?? 0 };
    const bad = await backend.runs
      .settle([
        { ...ref, kind: "done", result: { big: 2n }, resultTtlMs: 1000 },
        { ...ref, kind: "dead_letter", reason: "permanent_failure", error: null, tags: { big: 3n } },
      ])
      .catch((e: unknown) => e);
    expect(isSoniqError(bad, "SONIQ_INVALID_ARGUMENT")).toBe(true);
    expect((await backend.jobs.get(ok.id))?.status).toBe("processing");
    await backend.close();
  });
});

describe("sqlite/enqueue ids", () => {
  it("an id that already exists rejects the whole enqueueMany with SONIQ_INVALID_ARGUMENT", async () => {
    const backend = await migrated(tmp.file());
    const first = newJob();
    await backend.jobs.enqueue(first, {});
    const fresh = newJob();
    const err = await backend.jobs
      .enqueueMany([fresh, { ...newJob(), id: first.id }], {})
      .catch((e: unknown) => e);
    expect(isSoniqError(err, "SONIQ_INVALID_ARGUMENT")).toBe(true);
    expect(await backend.jobs.get(fresh.id)).toBeNull();
    await backend.close();
  });
});

describe("sqlite/claim", () => {
  it("merges several queues in priority, scheduled_at, creation order (listed, all, and many queues)", async () => {
    const backend = await migrated(tmp.file());
    const past = (ms: number) => new Date(Date.now() - ms);
    const a1 = newJob({ queue: "a", priority: 5, scheduledAt: past(1000) });
    const b1 = newJob({ queue: "b", priority: 1, scheduledAt: past(500) });
    const a2 = newJob({ queue: "a", priority: 1, scheduledAt: past(900) });
    const c1 = newJob({ queue: "c", priority: 1, scheduledAt: past(900) });
    const later = newJob({ queue: "b", priority: 0, scheduledAt: new Date(Date.now() + 60_000) });
    await backend.jobs.enqueueMany([a1, b1, a2, c1, later], {});
    const listed = (await backend.runs.claim({ queues: ["a", "b", "a"], limit: 5, workerId: null })).jobs;
    expect(listed.map((j) => j.id)).toEqual([a2.id, b1.id, a1.id]);
    const all = (await backend.runs.claim({ queues: null, limit: 5, workerId: null })).jobs;
    expect(all.map((j) => j.id)).toEqual([c1.id]);

    // More queues than the per-queue merge handles: one sorted scan, same order.
    const many = Array.from({ length: 40 }, (_, i) => newJob({ queue: `q${i}`, priority: 40 - i }));
    await backend.jobs.enqueueMany(many, {});
    const fromList = (
      await backend.runs.claim({ queues: many.map((j) => j.queue), limit: 3, workerId: null })
    ).jobs;
    expect(fromList.map((j) => j.id)).toEqual([many[39]?.id, many[38]?.id, many[37]?.id]);
    const fromAll = (await backend.runs.claim({ queues: null, limit: 3, workerId: null })).jobs;
    expect(fromAll.map((j) => j.id)).toEqual([many[36]?.id, many[35]?.id, many[34]?.id]);
    await backend.close();
  });

  it("two backend objects on one file never claim the same job", async () => {
    const file = tmp.file();
    const a = await migrated(file);
    const b = sqliteBackend({ filename: file });
    await a.jobs.enqueueMany(
      Array.from({ length: 200 }, () => newJob()),
      {},
    );
    const seen: string[] = [];
    for (let i = 0; i < 40; i++) {
      const claim = { queues: null, limit: 3, workerId: null };
      const [x, y] = await Promise.all([a.runs.claim(claim), b.runs.claim(claim)]);
      seen.push(...x.jobs.map((j) => j.id), ...y.jobs.map((j) => j.id));
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toHaveLength(200);
    await a.close();
    await b.close();
  });
});

describe("sqlite/workers", () => {
  it("recovery takes back a stopped worker's jobs at once, and a live worker's only once it is stale", async () => {
    const file = tmp.file();
    const backend = await migrated(file);
    await backend.workers.register(worker("gone"));
    await backend.workers.register(worker("live"));
    const [left, held] = [newJob(), newJob()];
    await backend.jobs.enqueue(left, {});
    await backend.runs.claim({ queues: null, limit: 1, workerId: "gone" });
    await backend.jobs.enqueue(held, {});
    await backend.runs.claim({ queues: null, limit: 1, workerId: "live" });
    await backend.workers.stop("gone"); // its give-back never happened
    expect(await backend.workers.recoverStale(60_000)).toEqual({ workerIds: [], requeuedJobIds: [left.id] });
    expect(await backend.jobs.get(left.id)).toMatchObject({ status: "queued", workerId: null, attempts: 1 });
    expect((await backend.jobs.get(held.id))?.status).toBe("processing");

    const db = new Database(file);
    db.prepare("UPDATE soniq_workers SET last_heartbeat = last_heartbeat - 120000 WHERE id = 'live'").run();
    db.close();
    expect(await backend.workers.recoverStale(60_000)).toEqual({
      workerIds: ["live"],
      requeuedJobIds: [held.id],
    });
    expect(await backend.jobs.get(held.id)).toMatchObject({ status: "queued", workerId: null, attempts: 1 });
    expect(await backend.workers.heartbeat("live", null)).toBe(false);
    await backend.close();
  });

  it("recovery requeues jobs whose worker row is missing, and leaves jobs claimed without a worker", async () => {
    const file = tmp.file();
    const db = new Database(file);
    // A caller's connection without foreign keys can delete a worker row under its jobs.
    db.pragma("foreign_keys = OFF");
    const backend = sqliteBackend({ database: db }, { configureDatabase: false });
    await backend.migrations.apply();
    await backend.workers.register(worker("w"));
    const [orphan, anonymous] = [newJob(), newJob()];
    await backend.jobs.enqueue(orphan, {});
    await backend.runs.claim({ queues: null, limit: 1, workerId: "w" });
    await backend.jobs.enqueue(anonymous, {});
    await backend.runs.claim({ queues: null, limit: 1, workerId: null });
    db.prepare("DELETE FROM soniq_workers WHERE id = 'w'").run();
    expect(await backend.workers.recoverStale(60_000)).toEqual({
      workerIds: [],
      requeuedJobIds: [orphan.id],
    });
    expect((await backend.jobs.get(anonymous.id))?.status).toBe("processing");
    await backend.close();
    db.close();
  });

  it("stale recovery requeues two running jobs with one dedup_key: the second gives the key up", async () => {
    const file = tmp.file();
    const backend = await migrated(file);
    await backend.workers.register(worker("w1", { concurrency: 2 }));
    const first = newJob({ dedupKey: "k" });
    await backend.jobs.enqueue(first, {});
    await backend.runs.claim({ queues: ["default"], limit: 1, workerId: "w1" });
    const second = newJob({ dedupKey: "k" });
    expect(await backend.jobs.enqueue(second, {})).toEqual({ id: second.id, deduplicated: false });
    await backend.runs.claim({ queues: ["default"], limit: 1, workerId: "w1" });
    const db = new Database(file);
    db.prepare("UPDATE soniq_workers SET last_heartbeat = last_heartbeat - 60000").run();
    db.close();
    const recovered = await backend.workers.recoverStale(1000);
    expect(recovered.requeuedJobIds.sort()).toEqual([first.id, second.id].sort());
    const keys = await Promise.all(
      [first.id, second.id].map(async (id) => (await backend.jobs.get(id))?.dedupKey),
    );
    expect(keys.sort()).toEqual(["k", null].sort());
    expect((await backend.jobs.enqueue(newJob({ dedupKey: "k" }), {})).deduplicated).toBe(true);
    await backend.close();
  });
});

describe("sqlite/leases", () => {
  it("one holder at a time across two connections; renew, release and expiry", async () => {
    const file = tmp.file();
    const a = await migrated(file);
    const b = sqliteBackend({ filename: file });
    expect(await a.leases.tryAcquire("scheduler", "a", 60_000)).toBe(true);
    expect(await b.leases.tryAcquire("scheduler", "b", 60_000)).toBe(false);
    expect(await a.leases.tryAcquire("scheduler", "a", 60_000)).toBe(true);
    await b.leases.release("scheduler", "b");
    expect(await b.leases.tryAcquire("scheduler", "b", 60_000)).toBe(false);
    await a.leases.release("scheduler", "a");
    expect(await b.leases.tryAcquire("scheduler", "b", 1)).toBe(true);
    const db = new Database(file);
    db.prepare("UPDATE soniq_leases SET expires_at = expires_at - 1000").run();
    db.close();
    expect(await a.leases.tryAcquire("scheduler", "a", 60_000)).toBe(true);
    await a.close();
    await b.close();
  });

  // The kit's leases/expire-after-ttl runs only for advisoryLocks: false (session-scoped Postgres locks do
  // not expire); SQLite leases are rows with an expiry, so the behaviour is checked here.
  it("a lease that is not renewed expires after its TTL and another holder takes it", async () => {
    const file = tmp.file();
    const a = await migrated(file);
    const b = sqliteBackend({ filename: file });
    expect(await a.leases.tryAcquire("leader", "a", 200)).toBe(true);
    expect(await b.leases.tryAcquire("leader", "b", 60_000)).toBe(false);
    await eventually(async () => expect(await b.leases.tryAcquire("leader", "b", 60_000)).toBe(true));
    expect(await a.leases.tryAcquire("leader", "a", 60_000)).toBe(false);
    await a.close();
    await b.close();
  });
});

describe("sqlite/wake-ups", () => {
  it("subscribers of the backend object hear enqueues after the write; unsubscribe stops them", async () => {
    const backend = await migrated(tmp.file());
    const heard: string[] = [];
    const unsubscribe = await backend.wakeUps.subscribe((queue) => heard.push(queue));
    await backend.jobs.enqueue(newJob({ queue: "emails" }), {});
    await Promise.resolve();
    expect(heard).toEqual(["emails"]);
    await unsubscribe();
    await backend.jobs.enqueue(newJob({ queue: "emails" }), {});
    await Promise.resolve();
    expect(heard).toEqual(["emails"]);
    await backend.close();
  });
});
