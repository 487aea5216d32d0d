/**
 * Transactional enqueue: the job and its NOTIFY ride in the caller's transaction, on a raw pg client or
 * a Drizzle node-postgres transaction. Nothing is visible or announced before commit; a rollback leaves
 * no job and no notification.
 */
import { isSoniqError } from "@soniq/core/backend";
import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type PostgresBackend, postgresBackend } from "../src/index.js";
import { createMigratedDatabase, eventually, newJob, type TestDatabase } from "./pgdb.js";

let db: TestDatabase;
let pool: pg.Pool;
let backend: PostgresBackend;
let heard: string[];
let unsubscribe: () => Promise<void>;
let sentinelCount = 0;

beforeAll(async () => {
  db = await createMigratedDatabase();
  pool = new pg.Pool({ connectionString: db.url });
  // pool.end() resolves before its sockets close; DROP DATABASE ... WITH (FORCE) may then kill them.
  pool.on("error", () => {});
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});
beforeEach(async () => {
  backend = postgresBackend({ pool });
  heard = [];
  unsubscribe = await backend.wakeUps.subscribe((queue) => heard.push(queue));
});
afterEach(async () => {
  await unsubscribe();
  await backend.close();
});

/**
 * Notifications arrive in commit order, so once a sentinel sent after a point has arrived, anything
 * committed before that point has arrived too: "not heard by then" means "was not sent".
 */
async function flushNotifications(): Promise<void> {
  const marker = `sentinel_${++sentinelCount}`;
  await pool.query("SELECT pg_notify('soniq_new_job', $1)", [marker]);
  await eventually(() => heard.includes(marker));
}

async function jobExists(id: string): Promise<boolean> {
  const res = await pool.query("SELECT 1 FROM soniq_jobs WHERE id = $1", [id]);
  return res.rowCount === 1;
}

describe("transactional enqueue with a pg client", () => {
  it("is invisible and silent until commit, then visible and announced", async () => {
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      const job = newJob({ queue: "tx_commit" });
      const result = await backend.jobs.enqueue(job, { tx: client });
      expect(result).toEqual({ id: job.id, deduplicated: false });
      expect(await jobExists(job.id)).toBe(false);
      await flushNotifications();
      expect(heard).not.toContain("tx_commit");
      await client.query("COMMIT");
      await eventually(() => heard.includes("tx_commit"));
      expect(await jobExists(job.id)).toBe(true);
    } finally {
      client.release();
    }
  });

  it("leaves no job and no notification after rollback (enqueue and enqueueMany)", async () => {
    const client = await pool.connect();
    const jobs = [newJob({ queue: "tx_rollback" }), newJob({ queue: "tx_rollback" })];
    try {
      await client.query("BEGIN");
      await backend.jobs.enqueue(newJob({ queue: "tx_rollback", id: jobs[0]?.id }), { tx: client });
      await backend.jobs.enqueueMany([newJob({ queue: "tx_rollback", id: jobs[1]?.id })], { tx: client });
      await client.query("ROLLBACK");
    } finally {
      client.release();
    }
    await flushNotifications();
    expect(heard).not.toContain("tx_rollback");
    for (const job of jobs) expect(await jobExists(job.id)).toBe(false);
  });

  it("works with a plain pg.Client too", async () => {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      await client.query("BEGIN");
      const job = newJob({ queue: "tx_client" });
      await backend.jobs.enqueue(job, { tx: client });
      await client.query("COMMIT");
      expect(await jobExists(job.id)).toBe(true);
    } finally {
      await client.end();
    }
  });

  it("refuses a pg.Pool as tx (its queries may run on different connections)", async () => {
    const err = await backend.jobs
      .enqueue(newJob(), { tx: pool as unknown as pg.PoolClient })
      .catch((e) => e);
    expect(isSoniqError(err, "SONIQ_TRANSACTION_UNSUPPORTED")).toBe(true);
  });

  it("answers a never-connected or ended pg.Client at once with a typed error, and writes nothing", async () => {
    const job = newJob({ queue: "tx_unconnected" });
    const fresh = new pg.Client({ connectionString: db.url });
    const started = Date.now();
    const err = await backend.jobs.enqueue(job, { tx: fresh }).catch((e: unknown) => e);
    expect(isSoniqError(err, "SONIQ_TRANSACTION_UNSUPPORTED")).toBe(true);
    expect(String((err as Error).message)).toMatch(/not connected/);
    expect(Date.now() - started).toBeLessThan(1000);
    const ended = new pg.Client({ connectionString: db.url });
    await ended.connect();
    await ended.end();
    const late = await backend.jobs.enqueueMany([job], { tx: ended }).catch((e: unknown) => e);
    expect(isSoniqError(late, "SONIQ_TRANSACTION_UNSUPPORTED")).toBe(true);
    expect(await jobExists(job.id)).toBe(false);
  });

  it("knows a never-connected client of another copy of pg by its shape (instanceof fails across copies)", async () => {
    // What a second copy of pg in node_modules hands over: a Client of another class, the same fields.
    class OtherCopyClient {
      readonly connectionParameters = { host: "127.0.0.1" };
      _connected = false;
      _ending = false;
      connect(): Promise<void> {
        return Promise.resolve();
      }
      query(): Promise<never> {
        return new Promise(() => {}); // pg queues it until connect(): forever, for a client nobody connects
      }
    }
    const job = newJob({ queue: "tx_other_copy" });
    const err = await backend.jobs
      .enqueue(job, { tx: new OtherCopyClient() as unknown as pg.Client })
      .catch((e: unknown) => e);
    expect(isSoniqError(err, "SONIQ_TRANSACTION_UNSUPPORTED")).toBe(true);
    expect(String((err as Error).message)).toMatch(/not connected/);
    expect(await jobExists(job.id)).toBe(false);
  });

  it("refuses something that is not a database handle", async () => {
    const err = await backend.jobs.enqueue(newJob(), { tx: {} as pg.PoolClient }).catch((e) => e);
    expect(isSoniqError(err, "SONIQ_TRANSACTION_UNSUPPORTED")).toBe(true);
  });
});

describe("transactional enqueue with Drizzle", () => {
  it("commits with the Drizzle transaction", async () => {
    const orm = drizzle({ client: pool });
    const job = newJob({ queue: "drizzle_commit" });
    await orm.transaction(async (tx) => {
      await backend.jobs.enqueue(job, { tx });
      expect(await jobExists(job.id)).toBe(false);
    });
    expect(await jobExists(job.id)).toBe(true);
    await eventually(() => heard.includes("drizzle_commit"));
  });

  it("rolls back with the Drizzle transaction: no job, no notification", async () => {
    const orm = drizzle({ client: pool });
    const job = newJob({ queue: "drizzle_rollback" });
    const dedup = newJob({ queue: "drizzle_rollback", dedupKey: "drizzle-k" });
    await expect(
      orm.transaction(async (tx) => {
        await backend.jobs.enqueueMany([job, dedup], { tx });
        tx.rollback();
      }),
    ).rejects.toThrow();
    await flushNotifications();
    expect(heard).not.toContain("drizzle_rollback");
    expect(await jobExists(job.id)).toBe(false);
    expect(await jobExists(dedup.id)).toBe(false);
  });

  it("accepts a Drizzle database (not in a transaction) and deduplicates through it", async () => {
    const orm = drizzle({ client: pool });
    const first = await backend.jobs.enqueue(newJob({ dedupKey: "drizzle-db" }), { tx: orm });
    const second = await backend.jobs.enqueue(newJob({ dedupKey: "drizzle-db" }), { tx: orm });
    expect(second).toEqual({ id: first.id, deduplicated: true });
  });

  it("passes dates and both-keyed jobs through a Drizzle transaction", async () => {
    const orm = drizzle({ client: pool });
    const runAt = new Date(Date.now() + 60_000);
    const later = newJob({ queue: "drizzle_dates", scheduledAt: runAt });
    const keyed = newJob({ queue: "drizzle_dates", dedupKey: "dz-both", unique: true, argsHash: "h" });
    const results = await orm.transaction(async (tx) => [
      await backend.jobs.enqueue(later, { tx }),
      await backend.jobs.enqueue(keyed, { tx }),
      await backend.jobs.enqueue({ ...keyed, id: newJob().id }, { tx }),
    ]);
    expect(results.map((r) => r.deduplicated)).toEqual([false, false, true]);
    expect(results[2]?.id).toBe(keyed.id);
    expect((await backend.jobs.get(later.id))?.scheduledAt.getTime()).toBe(runAt.getTime());
  });

  it("translates errors drizzle wraps (the pg error sits in err.cause)", async () => {
    const orm = drizzle({ client: pool });
    const bad = newJob({ priority: 2 ** 40 });
    const err = await backend.jobs.enqueue(bad, { tx: orm }).catch((e) => e);
    expect(isSoniqError(err, "SONIQ_BACKEND_ERROR")).toBe(true);
    expect(err.context.sqlState).toBe("22003");
  });
});
