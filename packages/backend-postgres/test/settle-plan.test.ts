/**
 * The settle statement must stay linear in its batch: every CTE finds its rows through the primary key
 * (`id = ANY($n)`) and reads its item from the jsonb object, with no join against an item list (unnest /
 * jsonb_to_recordset joins were planned as nested loops re-reading the list per row: quadratic). EXPLAIN
 * ANALYZE runs the statement the backend prepares, with 500 mixed items on 20,000 jobs and 2,000
 * dead-letter rows with statistics, both as a custom plan and as the generic plan a prepared statement
 * switches to.
 */
import type { Settlement } from "@soniq/core/backend";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresBackend } from "../src/index.js";
import { createMigratedDatabase, newJob, type TestDatabase } from "./pgdb.js";
import { explainSettle } from "./settle-explain.js";

let db: TestDatabase;
let client: pg.Client;
let items: Settlement[] = [];

beforeAll(async () => {
  db = await createMigratedDatabase();
  const backend = postgresBackend({ connectionString: db.url });
  try {
    for (let i = 0; i < 20; i++) {
      await backend.jobs.enqueueMany(
        Array.from({ length: 1000 }, () => newJob({ queue: "plan" })),
        {},
      );
    }
    const claimed = (await backend.runs.claim({ queues: ["plan"], limit: 500, workerId: null })).jobs;
    items = claimed.map((job, i): Settlement => {
      const ref = { id: job.id, attempt: job.attempts };
      if (i % 4 === 0) return { ...ref, kind: "done", result: { i }, resultTtlMs: 60_000 };
      if (i % 4 === 1) return { ...ref, kind: "done", result: null, resultTtlMs: 0 };
      if (i % 4 === 2) {
        return {
          ...ref,
          kind: "requeue",
          cause: "retry",
          attempts: job.attempts,
          delayMs: 1000,
          lastError: "e",
        };
      }
      return { ...ref, kind: "dead_letter", reason: "permanent_failure", error: "e", tags: null };
    });
  } finally {
    await backend.close();
  }
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
  await client.query(`INSERT INTO soniq_dead_letter_jobs (id, job_name, args, queue, priority, max_attempts,
      attempts, dead_letter_reason, original_created_at)
    SELECT gen_random_uuid(), 'old', '{}', 'plan', 100, 3, 3, 'max_retries_exceeded', now()
    FROM generate_series(1, 2000)`);
  await client.query("ANALYZE soniq_jobs");
  await client.query("ANALYZE soniq_dead_letter_jobs");
});
afterAll(async () => {
  await client?.end();
  await db?.drop();
});

describe("settle/plan with 500 mixed items", () => {
  it.each(["auto", "force_generic_plan"] as const)(
    "%s: primary-key lookups only, no scan and no join against the items",
    async (mode) => {
      const text = await explainSettle(client, items, mode);
      expect(text, text).not.toMatch(/Seq Scan|Function Scan|Hash Join|Merge Join|Sort/);
      // done, requeued, deleted, moved: each reads soniq_jobs through its primary key (an index scan, or a
      // bitmap scan of it when the array is known to be large).
      expect(text.match(/Index Scan (on|using) soniq_jobs_pkey/g)?.length, text).toBe(4);
      // And each writes its 125 rows.
      for (const cte of ["done", "requeued", "deleted", "dead"]) {
        expect(text, text).toMatch(
          new RegExp(`CTE Scan on ${cte} \\(actual time=[\\d.]+ rows=125 loops=1\\)`),
        );
      }
      // Each of the 125 dead_letter items is checked against the dead-letter table by its primary key.
      expect(text, text).toMatch(
        /Index Only Scan using soniq_dead_letter_jobs_pkey|Index Scan using soniq_dead_letter_jobs_pkey/,
      );
      expect(text, text).toMatch(/Insert on soniq_dead_letter_jobs/);
    },
  );
});
