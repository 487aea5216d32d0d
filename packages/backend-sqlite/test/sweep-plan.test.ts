/**
 * The retention sweep reads `idx_soniq_jobs_finished` (queue, status, expires_at) queue by queue, so its cost
 * follows the rows it deletes, not the done rows kept: the statement is planned on that index with all three
 * keys, and no step scans the jobs table. A sweep that fell back to a scan would still delete the right rows
 * (the testkit checks those); this file is what fails then.
 */
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SqliteBackend } from "../src/index.js";
import { DELETE_EXPIRED } from "../src/jobs.js";
import { migrated, tempDir } from "./helpers.js";

const tmp = tempDir();
afterAll(() => tmp.remove());

let file: string;
let backend: SqliteBackend;
beforeEach(async () => {
  file = tmp.file();
  backend = await migrated(file);
});
afterEach(() => backend.close());

const HOUR = 3_600_000;

/** `kept` done rows per queue that expire in an hour, `expired` per queue that expired an hour ago. */
function seed(queues: readonly string[], kept: number, expired: number): void {
  const db = new Database(file);
  try {
    const insert = db.prepare(`INSERT INTO soniq_jobs (id, job_name, args, status, queue, expires_at)
      VALUES (?, 'sweep.job', '{}', ?, ?, ?)`);
    const now = Date.now();
    db.transaction(() => {
      for (const queue of queues) {
        for (let i = 0; i < kept; i++) insert.run(`${queue}-kept-${i}`, "done", queue, now + HOUR);
        for (let i = 0; i < expired; i++) insert.run(`${queue}-expired-${i}`, "done", queue, now - HOUR);
        // A cancelled row past the same time: the sweep removes done rows only.
        insert.run(`${queue}-cancelled`, "cancelled", queue, now - HOUR);
      }
    })();
    db.exec("ANALYZE");
  } finally {
    db.close();
  }
}

function plan(): string[] {
  const db = new Database(file, { readonly: true });
  try {
    const rows = db.prepare(`EXPLAIN QUERY PLAN ${DELETE_EXPIRED}`).all() as { detail: string }[];
    return rows.map((r) => r.detail);
  } finally {
    db.close();
  }
}

function count(where: string): number {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare(`SELECT count(*) AS n FROM soniq_jobs WHERE ${where}`).get() as { n: number }).n;
  } finally {
    db.close();
  }
}

describe("jobs.deleteExpired plan", () => {
  it("sweep/reads-the-finished-index-per-queue: every step is an index search, none a table scan", () => {
    seed(["alpha", "beta", "gamma"], 2_000, 10);
    const steps = plan();
    // The per-queue range: `queue=?` or, in newer SQLite releases, `ANY(queue)` (one seek per listed queue).
    const range =
      /^SEARCH soniq_jobs USING INDEX idx_soniq_jobs_finished \((queue=\?|ANY\(queue\)) AND status=\? AND expires_at<\?\)$/;
    expect(steps.filter((s) => range.test(s))).toHaveLength(1);
    expect(steps.filter((s) => s.startsWith("SCAN soniq_jobs"))).toEqual([]);
  });

  it("sweep/deletes-only-expired-done-rows: kept and cancelled rows stay, in every queue", async () => {
    seed(["alpha", "beta", "gamma"], 500, 7);
    expect(await backend.jobs.deleteExpired()).toBe(21);
    expect(count("status = 'done'")).toBe(1_500);
    expect(count("status = 'cancelled'")).toBe(3);
    expect(await backend.jobs.deleteExpired()).toBe(0);
  });
});
