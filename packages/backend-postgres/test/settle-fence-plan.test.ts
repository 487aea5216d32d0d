/**
 * A drain leaves one dead entry in `idx_soniq_jobs_processing` per job it ran until a vacuum removes them
 * (autovacuum may be behind, or off). The settle's status fence must stay a filter on the rows its ids find:
 * written as a plain `status = 'processing'` it matched that partial index's predicate, and the prepared
 * statement's generic plan ANDed a bitmap of the whole index with the primary-key lookups, so every settle
 * read every entry left since the last vacuum (30,000 entries: a quarter of a 300-item settle's time).
 * 20,000 jobs run through claim and settle without a vacuum or statistics, then the generic plan of a
 * 300-item settle (done, requeue and dead-letter parts) is read. The grouped checkpoint write of `steps.save`
 * (SAVE_STEPS) fences its jobs the same way, and its generic plan is read on the same table.
 */
import type { Settlement } from "@soniq/core/backend";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresBackend } from "../src/index.js";
import { LIST_STEPS_MANY, SAVE_STEPS } from "../src/internal/step-rows.js";
import { createMigratedDatabase, newJob, type TestDatabase } from "./pgdb.js";
import { explainSettle } from "./settle-explain.js";

let db: TestDatabase;
let client: pg.Client;
let items: Settlement[] = [];

beforeAll(async () => {
  db = await createMigratedDatabase();
  const backend = postgresBackend({ connectionString: db.url });
  try {
    for (let i = 0; i < 21; i++) {
      await backend.jobs.enqueueMany(
        Array.from({ length: i < 20 ? 1000 : 300 }, () => newJob({ queue: "fence" })),
        {},
      );
    }
    for (;;) {
      const claimed = (await backend.runs.claim({ queues: ["fence"], limit: 500, workerId: null })).jobs;
      if (claimed.length < 500) {
        items = claimed.slice(0, 300).map((job, i): Settlement => {
          const ref = { id: job.id, attempt: job.attempts };
          if (i % 3 === 0) return { ...ref, kind: "done", result: null, resultTtlMs: 60_000 };
          if (i % 3 === 1) {
            return {
              ...ref,
              kind: "requeue",
              cause: "retry",
              attempts: job.attempts,
              delayMs: 0,
              lastError: "e",
            };
          }
          return { ...ref, kind: "dead_letter", reason: "permanent_failure", error: "e", tags: null };
        });
        break;
      }
      await backend.runs.settle(
        claimed.map((job) => ({
          id: job.id,
          attempt: job.attempts,
          kind: "done",
          result: null,
          resultTtlMs: 60_000,
        })),
      );
    }
  } finally {
    await backend.close();
  }
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
}, 120_000);
afterAll(async () => {
  await client?.end();
  await db?.drop();
});

describe("settle/fence after a drain, no vacuum", () => {
  it("the generic plan reads the primary key only, never the processing index", async () => {
    expect(items).toHaveLength(300);
    const text = await explainSettle(client, items, "force_generic_plan");
    expect(text, text).not.toMatch(/idx_soniq_jobs_processing|BitmapAnd/);
    for (const cte of ["done", "requeued", "dead"]) {
      expect(text, text).toMatch(new RegExp(`CTE Scan on ${cte} \\(actual time=[\\d.]+ rows=100 loops=1\\)`));
    }
  });
});

describe("steps.save's grouped write after a drain, no vacuum", () => {
  it("the generic plan fences the jobs through the primary key, never a scan or the processing index", async () => {
    const ids = items.slice(0, 100).map((i) => i.id);
    const arr = (xs: readonly (string | null)[]) =>
      `'{${xs.map((x) => (x === null ? "NULL" : `"${x}"`)).join(",")}}'`;
    const params = [
      arr(ids),
      arr(ids.map(() => "1")),
      arr(ids.map(() => null)),
      arr(ids.map(() => "step")),
      arr(ids.map(() => "done")),
      arr(ids.map(() => "1")),
      arr(ids.map(() => null)),
      arr(ids.map(() => new Date().toISOString())),
    ];
    await client.query("BEGIN");
    try {
      await client.query("SET LOCAL plan_cache_mode = force_generic_plan");
      await client.query(`PREPARE save_steps_plan AS ${SAVE_STEPS}`);
      const res = await client.query(
        `EXPLAIN (ANALYZE, COSTS OFF) EXECUTE save_steps_plan(${params.join(", ")})`,
      );
      const text = res.rows
        .map((r: Record<string, string>) => r["QUERY PLAN"])
        .join("\n")
        .replace(/'[^']*'::uuid\[\]/g, "'...'::uuid[]");
      expect(text, text).not.toMatch(/Seq Scan on soniq_jobs\b|idx_soniq_jobs_processing|BitmapAnd/);
      expect(text, text).toMatch(/Index Scan (using|on) soniq_jobs_pkey/);
      // Every item applied: the 100 jobs are processing at attempt 1.
      expect(text, text).toMatch(/Insert on soniq_job_steps \(actual time=[\d.]+ rows=100 loops=1\)/);
    } finally {
      await client.query("ROLLBACK");
      await client.query("DEALLOCATE ALL");
    }
  });
});

describe("steps.list's grouped read after a drain, no vacuum", () => {
  it("the generic plan looks each job up through the primary key, never a scan of every checkpoint", async () => {
    // 20,000 checkpoints of 2,000 jobs written without statistics (a W9 drain's table), then 10 jobs read.
    await client.query(
      `INSERT INTO soniq_job_steps (job_id, name, seq, kind, state, attempt)
        SELECT j.id, 's' || n, n, 'step', 'done', 1
        FROM (SELECT gen_random_uuid() AS id FROM generate_series(1, 2000)) j, generate_series(1, 10) n`,
    );
    const { rows } = await client.query<{ job_id: string }>(
      "SELECT DISTINCT job_id FROM soniq_job_steps ORDER BY job_id LIMIT 10",
    );
    const ids = `'{${rows.map((r) => r.job_id).join(",")}}'`;
    await client.query("BEGIN");
    try {
      await client.query("SET LOCAL plan_cache_mode = force_generic_plan");
      await client.query(`PREPARE list_steps_plan AS ${LIST_STEPS_MANY}`);
      const res = await client.query(`EXPLAIN (ANALYZE, COSTS OFF) EXECUTE list_steps_plan(${ids})`);
      const text = res.rows.map((r: Record<string, string>) => r["QUERY PLAN"]).join("\n");
      expect(text, text).not.toMatch(/Seq Scan on soniq_job_steps/);
      expect(text, text).toMatch(/Index Scan (using|on) soniq_job_steps_pkey/);
      // Each of the 10 jobs' 10 checkpoints, and nothing else.
      expect(text, text).toMatch(/^Sort \(actual time=[\d.]+ rows=100 loops=1\)/);
    } finally {
      await client.query("ROLLBACK");
      await client.query("DEALLOCATE ALL");
    }
  });
});
