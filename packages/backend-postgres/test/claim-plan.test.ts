/**
 * The claim must read the fetch index in its full order and stop after `limit` rows, on a full table
 * with statistics (DESIGN.md section 11: an `IN (subquery)` claim turned into a whole-table scan there).
 * The plans are auto_explain's (with ANALYZE, nested statements included: the claim of every queue and of one
 * queue is the UPDATE inside `soniq_claim_any` / `soniq_claim_queue`, migration 0016) of the same SQL text the
 * backend runs, captured from the pool, run again in a transaction rolled back, with a registered worker's id
 * as a worker claims. The queue controls' check (the paused/limited queues read from `soniq_queues` once
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
    const text = (config as { text?: string } | null)?.text ?? "";
    const shape = text.includes("FROM soniq_claim_any(")
      ? "any"
      : text.includes("FROM soniq_claim_queue(")
        ? "one"
        : text.startsWith("UPDATE soniq_jobs\nSET status = 'processing'") && text.includes("queue = ANY($3")
          ? "some"
          : null;
    if (shape !== null) captured.set(`soniq_claim_${shape}`, text);
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
  // Superuser-only (the tests connect as postgres): every statement's plan, nested ones too, as a notice.
  const client = new pg.Client({
    connectionString: db.url,
    options:
      "-c session_preload_libraries=auto_explain -c auto_explain.log_min_duration=0 -c auto_explain.log_level=notice" +
      " -c auto_explain.log_nested_statements=on -c auto_explain.log_analyze=on -c auto_explain.log_costs=off",
  });
  await client.connect();
  await client.query("ANALYZE soniq_jobs");
  return { db, client, captured, workerId };
}

/** The plan of the claim's UPDATE when the captured statement `name` runs with `values` (rolled back). */
async function plan(f: Fixture, name: string, values: unknown[]): Promise<string> {
  const text = f.captured.get(name);
  if (!text) throw new Error(`the backend never ran the ${name} statement`);
  const plans: string[] = [];
  const onNotice = (notice: { message?: string }) => {
    if (notice.message?.includes("SET status = 'processing'")) plans.push(notice.message);
  };
  f.client.on("notice", onNotice);
  await f.client.query("BEGIN");
  try {
    await f.client.query(text, values);
  } finally {
    await f.client.query("ROLLBACK");
    f.client.off("notice", onNotice);
  }
  expect(plans, "auto_explain reported the claim's plan").toHaveLength(1);
  return plans[0] as string;
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
