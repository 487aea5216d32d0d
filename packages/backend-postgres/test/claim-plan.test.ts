/**
 * The claim must read the fetch index in its full order and stop after `limit` rows, on a full table
 * with statistics (DESIGN.md section 11: an `IN (subquery)` claim turned into a whole-table scan there).
 * EXPLAIN runs the same SQL text the backend prepares, captured from the pool, with a registered worker's
 * id as a worker claims. The queue controls' check (the paused/limited queues read from `soniq_queues` once
 * per statement) must not change that, also on the most common table of all: every job in the one queue
 * `default`. There the column statistics say `queue <> x` matches nothing for an unknown `x` (one distinct
 * value), and a plain `queue <> ALL(...)` filter made Postgres sort every queued row on every claim.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresBackend } from "../src/index.js";
import { createMigratedDatabase, newJob, registerWorker, type TestDatabase } from "./pgdb.js";

interface Fixture {
  db: TestDatabase;
  client: pg.Client;
  captured: Map<string, string>;
  workerId: string;
}

/** 20,000 queued rows over `queues`, the three claim statements captured, the table analyzed. */
async function fixture(queues: readonly string[]): Promise<Fixture> {
  const db = await createMigratedDatabase();
  const captured = new Map<string, string>();
  const pool = new pg.Pool({ connectionString: db.url });
  const query = pool.query.bind(pool);
  // Record the text of each claim statement the backend runs, by queue shape.
  pool.query = ((config: unknown, values?: unknown) => {
    const c = config as { text?: string };
    if (typeof c === "object" && c?.text?.startsWith("UPDATE soniq_jobs\nSET status = 'processing'")) {
      const shape = c.text.includes("queue = ANY($3")
        ? "some"
        : c.text.includes("queue = $3")
          ? "one"
          : "any";
      captured.set(`soniq_claim_${shape}`, c.text);
    }
    return (query as (a: unknown, b?: unknown) => unknown)(config, values);
  }) as typeof pool.query;
  const backend = postgresBackend({ pool });
  const workerId = randomUUID();
  await registerWorker(backend, workerId);
  for (let i = 0; i < 20; i++) {
    await backend.jobs.enqueueMany(
      Array.from({ length: 1000 }, (_, j) =>
        newJob({ queue: queues[j % queues.length] ?? "default", priority: j % 3 }),
      ),
      {},
    );
  }
  const [first = "default", second = first] = queues;
  await backend.runs.claim({ queues: null, limit: 1, workerId });
  await backend.runs.claim({ queues: [first], limit: 1, workerId });
  await backend.runs.claim({ queues: [first, second === first ? "other" : second], limit: 1, workerId });
  await backend.close();
  await pool.end();
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  await client.query("ANALYZE soniq_jobs");
  return { db, client, captured, workerId };
}

async function plan(f: Fixture, name: string, values: unknown[]): Promise<string> {
  const text = f.captured.get(name);
  if (!text) throw new Error(`the backend never ran the ${name} statement`);
  await f.client.query("BEGIN");
  try {
    const res = await f.client.query(`EXPLAIN (ANALYZE, COSTS OFF) ${text}`, values);
    return res.rows.map((r: Record<string, string>) => r["QUERY PLAN"]).join("\n");
  } finally {
    await f.client.query("ROLLBACK");
  }
}

describe.each([
  ["four queues", ["a", "b", "c", "d"]],
  ["one queue (default)", ["default"]],
])("claim/plan on 20,000 queued rows in %s", (_label, queues) => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture(queues);
  });
  afterAll(async () => {
    await f?.client.end();
    await f?.db.drop();
  });

  it.each([
    ["soniq_claim_any", "idx_soniq_jobs_fetch_all", null],
    ["soniq_claim_one", "idx_soniq_jobs_fetch", queues[0]],
  ])("%s reads the fetch index in order: no seq scan, no sort", async (name, index, queue) => {
    const values = queue === null ? [500, f.workerId] : [500, f.workerId, queue];
    const text = await plan(f, name, values);
    expect(text, text).toContain(`Index Scan using ${index} `);
    // soniq_queues (a few rows of settings) is read once per statement to leave paused/limited queues out.
    expect(text, text).not.toMatch(/Seq Scan on soniq_jobs|Sort/);
  });

  it("soniq_claim_some (several queues) uses an index, not a scan of the whole table", async () => {
    const text = await plan(f, "soniq_claim_some", [500, f.workerId, [queues[0], queues[1] ?? "other"]]);
    expect(text, text).not.toContain("Seq Scan on soniq_jobs");
  });
});
