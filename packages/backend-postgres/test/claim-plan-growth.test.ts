/**
 * The claim must stay an ordered read of the fetch index as its table grows from empty, on a table that
 * is never analyzed or vacuumed (a fresh database, or autovacuum off). A prepared claim would be planned
 * generically once, while the table was still small: Postgres then kept a bitmap scan and a sort of every
 * queued row, and a bitmap scan cannot mark the index entries of claimed rows dead, so every claim re-read
 * all the jobs ever queued (W7 in docs/benchmark/method.md: 2,000 jobs/s fell 1.4 s behind). The claim is now a
 * function whose plan is kept per connection (migration 0016), generic after five calls: the paths that read
 * every row are switched off inside it. The plan checked here is the one the backend's own claim ran with,
 * reported by auto_explain as a notice on its connection.
 */
import { randomUUID } from "node:crypto";
import type { Settlement } from "@soniq/core/backend";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PostgresBackend, postgresBackend } from "../src/index.js";
import { createMigratedDatabase, newJob, registerWorker, type TestDatabase } from "./pgdb.js";

let db: TestDatabase;
let pool: pg.Pool;
let backend: PostgresBackend;
const workerId = randomUUID();
/** auto_explain's plans of the claim statement, in execution order. */
const claimPlans: string[] = [];

beforeAll(async () => {
  db = await createMigratedDatabase();
  // Superuser-only (the tests connect as postgres): every statement's plan comes back as a notice.
  pool = new pg.Pool({
    connectionString: db.url,
    max: 2,
    options:
      "-c session_preload_libraries=auto_explain -c auto_explain.log_min_duration=0 -c auto_explain.log_level=notice" +
      // The claim's UPDATE runs inside `soniq_claim_any` (migration 0016): a nested statement.
      " -c auto_explain.log_nested_statements=on",
  });
  // An idle client the database drops at the end (57P01, terminated by the drop) is not a test failure.
  pool.on("error", (err: Error & { code?: string }) => {
    if (err.code !== "57P01") throw err;
  });
  pool.on("connect", (client) => {
    client.on("notice", (notice) => {
      if (notice.message?.includes("SET status = 'processing'")) claimPlans.push(notice.message);
    });
  });
  backend = postgresBackend({ pool });
  await registerWorker(backend, workerId);
});
afterAll(async () => {
  await backend?.close();
  await pool?.end();
  await db?.drop();
});

async function claimAndComplete(limit: number): Promise<number> {
  const { jobs } = await backend.runs.claim({ queues: null, limit, workerId });
  const items = jobs.map(
    (job): Settlement => ({
      kind: "done",
      id: job.id,
      attempt: job.attempts,
      result: null,
      resultTtlMs: 60_000,
    }),
  );
  await backend.runs.settle(items);
  return jobs.length;
}

describe("claim/plan as the table grows from empty", () => {
  it("reads the fetch index in order after thousands of jobs went through, not a sort of every queued row", async () => {
    // Ten claims on a nearly empty table: past the five executions after which a prepared statement's
    // generic plan is fixed.
    for (let i = 0; i < 10; i++) {
      await backend.jobs.enqueue(newJob(), {});
      expect(await claimAndComplete(10), "the one job enqueued is claimed").toBe(1);
    }
    // A backlog, then a history of claimed and finished jobs (their entries linger in the fetch index).
    for (let i = 0; i < 10; i++) {
      await backend.jobs.enqueueMany(
        Array.from({ length: 1000 }, () => newJob()),
        {},
      );
    }
    for (let i = 0; i < 20; i++) expect(await claimAndComplete(250), "a full claim").toBe(250);
    claimPlans.length = 0;
    expect(await claimAndComplete(50), "a full claim").toBe(50);
    const [last] = claimPlans;
    expect(last, "auto_explain reported the claim's plan").toBeDefined();
    expect(last, last).toContain("Index Scan using idx_soniq_jobs_fetch_all");
    expect(last, last).not.toMatch(/Sort|Seq Scan on soniq_jobs/);
  });
});
