/**
 * A drain leaves one dead entry in `idx_soniq_jobs_processing` per job it ran until a vacuum removes them
 * (autovacuum may be behind, or off). The settle's status fence must stay a filter on the rows its ids find:
 * written as a plain `status = 'processing'` it matched that partial index's predicate, and the prepared
 * statement's generic plan ANDed a bitmap of the whole index with the primary-key lookups, so every settle
 * read every entry left since the last vacuum (30,000 entries: a quarter of a 300-item settle's time).
 * 20,000 jobs run through claim and settle without a vacuum or statistics, then the generic plan of a
 * 300-item settle (done, requeue and dead-letter parts) is read.
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
