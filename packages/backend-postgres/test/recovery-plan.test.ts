/**
 * Stale-worker recovery runs every maintenance interval, so it must cost the same with a million done rows as
 * with none: it reads processing rows through `idx_soniq_jobs_processing` (only processing rows are in it),
 * never the whole table. EXPLAIN runs the statement text the backend sends, captured from the pool, on
 * 200,000 done rows (kept for their result TTL, each stamped with the worker that ran it) and a few processing
 * rows of a worker that has no row, with statistics.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresBackend } from "../src/index.js";
import { createMigratedDatabase, type TestDatabase } from "./pgdb.js";

let db: TestDatabase;
let client: pg.Client;
let recoverText = "";

beforeAll(async () => {
  db = await createMigratedDatabase();
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
  const ran = randomUUID();
  const missing = randomUUID();
  await client.query(
    `INSERT INTO soniq_jobs (job_name, args, status, attempts, worker_id, expires_at)
     SELECT 'plan.done', jsonb_build_object('i', g), 'done', 1, $1::uuid, now() + interval '5 minutes'
     FROM generate_series(1, 200000) g`,
    [ran],
  );
  await client.query(
    `INSERT INTO soniq_jobs (job_name, args, status, attempts, worker_id)
     SELECT 'plan.held', jsonb_build_object('i', g), 'processing', 1, $1::uuid FROM generate_series(1, 5) g`,
    [missing],
  );
  await client.query("ANALYZE soniq_jobs");
  const pool = new pg.Pool({ connectionString: db.url });
  const query = pool.query.bind(pool);
  pool.query = ((config: unknown, values?: unknown) => {
    const c = config as { text?: string };
    if (typeof c === "object" && c?.text?.includes("stale AS")) recoverText = c.text;
    return (query as (a: unknown, b?: unknown) => unknown)(config, values);
  }) as typeof pool.query;
  const backend = postgresBackend({ pool });
  // A first call (the jobs of the missing worker are requeued), then put them back for the EXPLAIN.
  const first = await backend.workers.recoverStale(60_000);
  expect(first.requeuedJobIds).toHaveLength(5);
  await backend.close();
  await pool.end();
  await client.query(
    "UPDATE soniq_jobs SET status = 'processing', worker_id = $1::uuid WHERE job_name = 'plan.held'",
    [missing],
  );
}, 120_000); // 200,000 rows: seconds on a quiet machine, more on a busy one
afterAll(async () => {
  await client?.end();
  await db?.drop();
});

describe("workers.recoverStale/plan on 200,000 done rows", () => {
  it("reads the processing index, not every row", async () => {
    expect(recoverText).not.toBe("");
    await client.query("BEGIN");
    try {
      const res = await client.query(`EXPLAIN (ANALYZE, COSTS OFF) ${recoverText}`, [60_000]);
      const text = res.rows.map((r: Record<string, string>) => r["QUERY PLAN"]).join("\n");
      expect(text, text).toContain("idx_soniq_jobs_processing");
      expect(text, text).not.toContain("Seq Scan on soniq_jobs");
    } finally {
      await client.query("ROLLBACK");
    }
  });
});
