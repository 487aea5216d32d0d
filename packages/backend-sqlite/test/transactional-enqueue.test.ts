/**
 * `enqueue({ tx })` joins the caller's open better-sqlite3 transaction: committed with it, gone with its
 * rollback. better-sqlite3 transactions are synchronous, so the backend inserts before its promise is
 * returned; the caller does not await inside the transaction.
 */
import { isSoniqError } from "@soniq/core/backend";
import { soniqJobs, sqliteSchema } from "@soniq/core/schema/sqlite";
import { newJob } from "@soniq/testkit";
import Database from "better-sqlite3";
import { drizzle } from "drizzle-orm/better-sqlite3";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { sqliteBackend } from "../src/index.js";
import { tempDir } from "./helpers.js";

const tmp = tempDir();
afterAll(() => tmp.remove());

let db: Database.Database;
let backend: ReturnType<typeof sqliteBackend>;
beforeEach(async () => {
  db = new Database(tmp.file());
  backend = sqliteBackend({ database: db });
  await backend.migrations.apply();
  db.exec("CREATE TABLE orders (id INTEGER PRIMARY KEY, total INTEGER NOT NULL)");
});
afterEach(async () => {
  await backend.close();
  db.close();
});

const count = () => (db.prepare("SELECT COUNT(*) AS n FROM soniq_jobs").get() as { n: number }).n;

describe("transactional enqueue/better-sqlite3 Database", () => {
  it("commits with the caller's transaction", async () => {
    const job = newJob();
    let pending: Promise<unknown> | undefined;
    db.transaction(() => {
      db.prepare("INSERT INTO orders (total) VALUES (10)").run();
      pending = backend.jobs.enqueue(job, { tx: db });
      // Already written inside the open transaction, before anyone awaits.
      expect(count()).toBe(1);
    })();
    await expect(pending).resolves.toEqual({ id: job.id, deduplicated: false });
    expect((await backend.jobs.get(job.id))?.status).toBe("queued");
  });

  it("disappears with the caller's rollback", async () => {
    const job = newJob();
    let pending: Promise<unknown> | undefined;
    expect(() =>
      db.transaction(() => {
        db.prepare("INSERT INTO orders (total) VALUES (10)").run();
        pending = backend.jobs.enqueueMany([job, newJob()], { tx: db });
        throw new Error("order failed");
      })(),
    ).toThrow("order failed");
    await pending;
    expect(count()).toBe(0);
    expect(await backend.jobs.get(job.id)).toBeNull();
    expect(db.prepare("SELECT COUNT(*) AS n FROM orders").get()).toEqual({ n: 0 });
  });

  it("works on a second connection to the same file, with its own transaction", async () => {
    const other = new Database(db.name);
    try {
      const job = newJob();
      other
        .transaction(() => {
          void backend.jobs.enqueue(job, { tx: other });
          // Not visible to the backend's connection until the caller commits.
          expect(count()).toBe(0);
        })
        .immediate();
      expect((await backend.jobs.get(job.id))?.id).toBe(job.id);
    } finally {
      other.close();
    }
  });
});

describe("transactional enqueue/Drizzle", () => {
  it("commits with a Drizzle transaction", async () => {
    const orm = drizzle({ client: db, schema: sqliteSchema });
    const job = newJob();
    orm.transaction((tx) => {
      void backend.jobs.enqueue(job, { tx });
      expect(tx.select().from(soniqJobs).all()).toHaveLength(1);
    });
    expect((await backend.jobs.get(job.id))?.status).toBe("queued");
  });

  it("rolls back with a Drizzle transaction", async () => {
    const orm = drizzle({ client: db });
    const job = newJob();
    expect(() =>
      orm.transaction((tx) => {
        void backend.jobs.enqueue(job, { tx });
        tx.rollback();
      }),
    ).toThrow("Rollback");
    expect(await backend.jobs.get(job.id)).toBeNull();
  });

  it("accepts a Drizzle database handle", async () => {
    const orm = drizzle({ client: db });
    const job = newJob();
    await backend.jobs.enqueue(job, { tx: orm });
    expect(await backend.jobs.get(job.id)).not.toBeNull();
  });
});

describe("transactional enqueue/bad handles", () => {
  it("rejects a tx that is not a better-sqlite3 or Drizzle handle, and writes nothing", async () => {
    const err = await backend.jobs
      .enqueue(newJob(), { tx: { query: () => 1 } as never })
      .catch((e: unknown) => e);
    expect(isSoniqError(err, "SONIQ_TRANSACTION_UNSUPPORTED")).toBe(true);
    expect(count()).toBe(0);
  });

  it("rejects a closed better-sqlite3 Database with a typed error, and writes nothing", async () => {
    const closed = new Database(db.name);
    closed.close();
    const calls: (() => Promise<unknown>)[] = [
      () => backend.jobs.enqueue(newJob(), { tx: closed }),
      () => backend.jobs.enqueueMany([newJob()], { tx: drizzle(closed) }),
    ];
    for (const call of calls) {
      const err = await Promise.resolve()
        .then(call)
        .catch((e: unknown) => e);
      expect(isSoniqError(err, "SONIQ_TRANSACTION_UNSUPPORTED"), String(err)).toBe(true);
      expect(String((err as Error).message)).toMatch(/closed/);
    }
    expect(count()).toBe(0);
  });
});
