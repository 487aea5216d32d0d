/** The migration runner: status, idempotence, and concurrent callers (advisory-locked). */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresBackend } from "../src/index.js";
import { createTestDatabase, type TestDatabase } from "./pgdb.js";

const ALL = [
  "0000_init",
  "0001_status_guards",
  "0002_fetch_index_order",
  "0003_drop_worker_fkey",
  "0004_schedule_ticks",
  "0005_queues",
  "0006_indexes",
  "0007_count_statistics",
  "0008_flows",
  "0009_progress",
  "0010_tracing",
  "0011_webhooks",
  "0012_flow_finished",
  "0013_slim_indexes",
  "0014_job_steps",
  "0015_args_version",
  "0016_claim_functions",
  "0017_flow_step_fillfactor",
  "0018_terminal_guard_after",
];

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

async function migrationRows(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const res = await client.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations",
    );
    return res.rows[0]?.n ?? -1;
  } finally {
    await client.end();
  }
}

describe("migrations", () => {
  it("reports everything pending on an empty database, then applies it once", async () => {
    const backend = postgresBackend({ connectionString: db.url });
    try {
      expect(await backend.migrations.status()).toEqual({ applied: [], pending: ALL });
      expect(await backend.migrations.apply()).toEqual({ applied: ALL, pending: [], appliedNow: ALL });
      expect(await backend.migrations.apply()).toEqual({ applied: ALL, pending: [], appliedNow: [] });
      expect(await backend.migrations.status()).toEqual({ applied: ALL, pending: [] });
      expect(await migrationRows(db.url)).toBe(ALL.length);
    } finally {
      await backend.close();
    }
  });

  it("three concurrent migrations.apply() calls on a fresh database all succeed, one row per migration", async () => {
    const fresh = await createTestDatabase();
    const backends = [1, 2, 3].map(() => postgresBackend({ connectionString: fresh.url }));
    try {
      const reports = await Promise.all(backends.map((b) => b.migrations.apply()));
      for (const report of reports) expect(report).toMatchObject({ applied: ALL, pending: [] });
      // Exactly one caller applied them; the others found nothing to do.
      expect(reports.map((r) => r.appliedNow.length).sort()).toEqual([0, 0, ALL.length]);
      expect(await migrationRows(fresh.url)).toBe(ALL.length);
    } finally {
      await Promise.all(backends.map((b) => b.close()));
      await fresh.drop();
    }
  });

  it("works with a pool of one connection it was given, and leaves that pool open", async () => {
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    pool.on("error", () => {});
    const backend = postgresBackend({ pool });
    try {
      expect((await backend.migrations.apply()).pending).toEqual([]);
      await backend.close();
      const res = await pool.query<{ one: number }>("SELECT 1 AS one");
      expect(res.rows[0]?.one).toBe(1);
    } finally {
      await pool.end();
    }
  });

  it("fails with SONIQ_MIGRATION_FAILED when the database cannot be reached", async () => {
    const url = new URL(db.url);
    url.pathname = "/soniq_no_such_database";
    const backend = postgresBackend({ connectionString: url.toString() });
    try {
      await expect(backend.migrations.apply()).rejects.toMatchObject({ code: "SONIQ_MIGRATION_FAILED" });
    } finally {
      await backend.close();
    }
  });
});
