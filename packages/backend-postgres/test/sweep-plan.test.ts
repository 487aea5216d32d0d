/**
 * The retention sweep runs every maintenance interval, so its cost must follow the rows it deletes, not the
 * done rows kept: it reads `idx_soniq_jobs_finished` queue by queue (no separate expires_at index since
 * migration 0013). On 200,000 kept done rows over three queues (statistics gathered), with 30 expired ones,
 * the sweep deletes exactly the expired done rows of every queue, keeps cancelled and unexpired ones, and
 * its plan reads the index, never the whole table.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresBackend } from "../src/index.js";
import { createMigratedDatabase, type TestDatabase } from "./pgdb.js";

let db: TestDatabase;
let client: pg.Client;
let sweepText = "";
let deleted = -1;

beforeAll(async () => {
  db = await createMigratedDatabase();
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
  await client.query(
    `INSERT INTO soniq_jobs (job_name, args, status, attempts, queue, expires_at)
     SELECT 'sweep.kept', jsonb_build_object('i', g), 'done', 1, 'q' || (g % 3), now() + interval '1 hour' + g * interval '1 millisecond'
     FROM generate_series(1, 200000) g`,
  );
  await client.query(
    `INSERT INTO soniq_jobs (job_name, args, status, attempts, queue, expires_at)
     SELECT 'sweep.expired', jsonb_build_object('i', g), 'done', 1, 'q' || (g % 3), now() - interval '1 second'
     FROM generate_series(1, 30) g`,
  );
  await client.query(
    `INSERT INTO soniq_jobs (job_name, args, status, attempts, queue, expires_at)
     SELECT 'sweep.cancelled', jsonb_build_object('i', g), 'cancelled', 1, 'q1', now() - interval '1 second'
     FROM generate_series(1, 5) g`,
  );
  await client.query("ANALYZE soniq_jobs");
  const pool = new pg.Pool({ connectionString: db.url });
  const query = pool.query.bind(pool);
  pool.query = ((config: unknown, values?: unknown) => {
    const c = config as { text?: string };
    if (
      typeof c === "object" &&
      c?.text?.includes("DELETE FROM soniq_jobs j\nWHERE j.ctid = ANY(ARRAY(SELECT e.ctid FROM q")
    )
      sweepText = c.text;
    return (query as (a: unknown, b?: unknown) => unknown)(config, values);
  }) as typeof pool.query;
  const backend = postgresBackend({ pool });
  deleted = await backend.jobs.deleteExpired();
  await backend.close();
  await pool.end();
}, 120_000); // 200,000 rows: seconds on a quiet machine, more on a busy one
afterAll(async () => {
  await client?.end();
  await db?.drop();
});

describe("jobs.deleteExpired on 200,000 kept done rows", () => {
  it("deletes every expired done row of every queue and nothing else", async () => {
    expect(deleted).toBe(30);
    const res = await client.query(
      "SELECT job_name, count(*)::int AS n FROM soniq_jobs GROUP BY job_name ORDER BY job_name",
    );
    expect(res.rows).toEqual([
      { job_name: "sweep.cancelled", n: 5 },
      { job_name: "sweep.kept", n: 200000 },
    ]);
  });

  it("reads the finished index queue by queue, not every row", async () => {
    expect(sweepText).not.toBe("");
    await client.query("BEGIN");
    try {
      const res = await client.query(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${sweepText}`);
      const text = res.rows.map((r: Record<string, string>) => r["QUERY PLAN"]).join("\n");
      expect(text, text).toContain("idx_soniq_jobs_finished");
      expect(text, text).not.toContain("Seq Scan on soniq_jobs");
      // Pages read in all: a few per queue and per deleted row. Scanning the index for the expired entries
      // (the plain `DELETE ... WHERE status = 'done' AND expires_at <= now()`) reads its ~1,000 pages.
      const pages = Number(/Buffers: shared hit=(\d+)/.exec(text)?.[1] ?? Number.NaN);
      expect(pages, text).toBeLessThan(60);
    } finally {
      await client.query("ROLLBACK");
    }
  });
});
