/**
 * The claim must read the fetch index in its full order and stop after `limit` rows, on a full table
 * with statistics (DESIGN.md section 11: an `IN (subquery)` claim turned into a whole-table scan there).
 * EXPLAIN runs the same SQL text the backend prepares, captured from the pool. The queue controls' check
 * (the paused/limited queues read from `soniq_queues` once per statement) must not change that.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresBackend } from "../src/index.js";
import { createMigratedDatabase, newJob, type TestDatabase } from "./pgdb.js";

let db: TestDatabase;
let client: pg.Client;
const captured = new Map<string, string>();

beforeAll(async () => {
  db = await createMigratedDatabase();
  const pool = new pg.Pool({ connectionString: db.url });
  const query = pool.query.bind(pool);
  // Record the text of each named statement the backend runs.
  pool.query = ((config: unknown, values?: unknown) => {
    const c = config as { name?: string; text?: string };
    if (typeof c === "object" && c?.name && c.text) captured.set(c.name, c.text);
    return (query as (a: unknown, b?: unknown) => unknown)(config, values);
  }) as typeof pool.query;
  const backend = postgresBackend({ pool });
  const queues = ["a", "b", "c", "d"];
  for (let i = 0; i < 20; i++) {
    await backend.jobs.enqueueMany(
      Array.from({ length: 1000 }, (_, j) => newJob({ queue: queues[j % 4] ?? "a", priority: j % 3 })),
      {},
    );
  }
  await backend.runs.claim({ queues: null, limit: 1, workerId: null });
  await backend.runs.claim({ queues: ["a"], limit: 1, workerId: null });
  await backend.runs.claim({ queues: ["a", "b"], limit: 1, workerId: null });
  await backend.close();
  await pool.end();
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
  await client.query("ANALYZE soniq_jobs");
});
afterAll(async () => {
  await client?.end();
  await db?.drop();
});

async function plan(name: string, values: unknown[]): Promise<string> {
  const text = captured.get(name);
  if (!text) throw new Error(`the backend never ran ${name}`);
  await client.query("BEGIN");
  try {
    const res = await client.query(`EXPLAIN (ANALYZE, COSTS OFF) ${text}`, values);
    return res.rows.map((r: Record<string, string>) => r["QUERY PLAN"]).join("\n");
  } finally {
    await client.query("ROLLBACK");
  }
}

describe("claim/plan on 20,000 queued rows", () => {
  it.each([
    ["soniq_claim_any", [500, null], "idx_soniq_jobs_fetch_all"],
    ["soniq_claim_one", [500, null, "a"], "idx_soniq_jobs_fetch"],
  ])("%s reads the fetch index in order: no seq scan, no sort", async (name, values, index) => {
    const text = await plan(name, values);
    expect(text, text).toContain(`Index Scan using ${index} `);
    // soniq_queues (a few rows of settings) is read once per statement to leave paused/limited queues out.
    expect(text, text).not.toMatch(/Seq Scan on soniq_jobs|Sort/);
  });

  it("soniq_claim_some (several queues) uses an index, not a scan of the whole table", async () => {
    const text = await plan("soniq_claim_some", [500, null, ["a", "b"]]);
    expect(text, text).not.toContain("Seq Scan on soniq_jobs");
  });
});
