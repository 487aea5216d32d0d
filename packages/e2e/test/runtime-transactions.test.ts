/**
 * Transactional enqueue through the app: the job row commits or rolls back with the caller's own
 * transaction, and `tx` is typed from the backend (`Soniq<B>`).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { memoryBackend } from "@soniq/backend-memory";
import { postgresBackend } from "@soniq/backend-postgres";
import { sqliteBackend } from "@soniq/backend-sqlite";
import { Soniq } from "@soniq/core";
import type { EnqueueResult } from "@soniq/core/backend";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import { postgresKind } from "./runtime-support.js";

describe("runtime/transactions on sqlite", () => {
  let dir = "";
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "soniq-tx-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("runtime/tx-sqlite: enqueue inside db.transaction() commits and rolls back with it", async () => {
    const db = new Database(join(dir, "app.db"));
    const soniq = new Soniq({ backend: sqliteBackend({ database: db }) });
    try {
      await soniq.setup();
      db.exec("CREATE TABLE orders (id INTEGER PRIMARY KEY, total INTEGER)");
      const invoice = soniq.job("orders.send_invoice", async (args: { orderId: number }) => args.orderId);
      // better-sqlite3 transactions are synchronous: the enqueue's insert runs inside the call, and its
      // promise (resolved with the id) is awaited after the transaction.
      let pending: Promise<EnqueueResult> | undefined;
      const place = db.transaction((total: number, fail: boolean) => {
        const { lastInsertRowid } = db.prepare("INSERT INTO orders (total) VALUES (?)").run(total);
        pending = invoice.enqueue({ orderId: Number(lastInsertRowid) }, { tx: db });
        if (fail) throw new Error("payment declined");
      });
      place(10, false);
      const committed = await (pending as Promise<EnqueueResult>);
      expect(() => place(20, true)).toThrow("payment declined");
      await (pending as Promise<EnqueueResult>).catch(() => {});
      expect(db.prepare("SELECT count(*) AS n FROM orders").get()).toEqual({ n: 1 });
      expect((await soniq.jobs.list()).map((j) => j.id)).toEqual([committed.id]);
      expect(await soniq.worker().runOnce()).toBe(1);
      expect((await soniq.jobs.get(committed.id))?.result ?? null).toBe(1);
    } finally {
      await soniq.close();
      expect(db.open).toBe(true); // a Database handed to the backend is left open
      db.close();
    }
  });
});

describe("runtime/transactions on postgres", () => {
  const kind = postgresKind();
  beforeAll(() => kind.setup(), 30_000);
  afterAll(() => kind.teardown(), 30_000);

  it("runtime/tx-postgres: enqueue on the caller's client commits and rolls back with it", async () => {
    const pool = new pg.Pool({ connectionString: kind.target() });
    const soniq = new Soniq({ backend: postgresBackend({ pool }) });
    try {
      await soniq.setup();
      await pool.query("CREATE TABLE orders (id serial PRIMARY KEY, total int)");
      const invoice = soniq.job("orders.send_invoice", async (args: { orderId: number }) => args.orderId);
      const place = async (total: number, fail: boolean): Promise<EnqueueResult | null> => {
        const client = await pool.connect();
        try {
          await client.query("BEGIN");
          const { rows } = await client.query<{ id: number }>(
            "INSERT INTO orders (total) VALUES ($1) RETURNING id",
            [total],
          );
          const result = await invoice.enqueue({ orderId: rows[0]?.id as number }, { tx: client });
          await client.query(fail ? "ROLLBACK" : "COMMIT");
          return fail ? null : result;
        } finally {
          client.release();
        }
      };
      const committed = await place(10, false);
      await place(20, true);
      expect((await pool.query("SELECT count(*)::int AS n FROM orders")).rows[0]).toEqual({ n: 1 });
      expect((await soniq.jobs.list()).map((j) => j.id)).toEqual([committed?.id]);
      expect(await soniq.worker().runOnce()).toBe(1);
      expect((await soniq.jobs.get(committed?.id as string))?.result ?? null).toBe(1);
    } finally {
      await soniq.close();
      await pool.end(); // the backend never ends a pool it was handed
    }
  });
});

describe("runtime/transactions typing", () => {
  it("runtime/tx-typed-by-backend: tx takes the backend's handle type; memory takes none", () => {
    const onMemory = new Soniq({ backend: memoryBackend() });
    const job = onMemory.job("a.b", async () => null);
    expectTypeOf(job.enqueue)
      .parameter(1)
      .exclude<undefined>()
      .toHaveProperty("tx")
      .toEqualTypeOf<undefined>();
    const onSqlite = new Soniq({ backend: sqliteBackend({ filename: ":memory:" }) });
    expectTypeOf<Parameters<typeof onSqlite.jobs.enqueue>[2]>()
      .exclude<undefined>()
      .toHaveProperty("tx")
      .not.toBeUnknown();
    void onMemory.close();
    void onSqlite.close();
  });
});
