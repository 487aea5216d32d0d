/**
 * The dashboard's reads on SQLite at scale: seeds a file with 1,000,000 done jobs and 100,000 dead letters
 * spread over 14 days (prepared inserts in large transactions, then ANALYZE), and times the core calls the
 * dashboard's pages make (one warm-up, then the median and worst of 5). The Postgres figures come from
 * packages/dashboard/scripts/timing.ts over HTTP; this one calls core directly, in process.
 *
 *   pnpm exec tsx --conditions=source packages/backend-sqlite/scripts/reads-at-scale.ts [file]
 *
 * The file (default: a temporary one) is overwritten.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { Soniq } from "@soniq/core";
import { newJobId } from "@soniq/core/backend";
import Database from "better-sqlite3";
import { sqliteBackend } from "../src/index.js";

const JOBS = 1_000_000;
const DEAD = 100_000;
const SPAN_MS = 14 * 86_400_000;
const NAMES = ["emails.send_welcome", "emails.send_receipt", "billing.charge", "billing.refund"];
const QUEUES = ["default", "emails", "billing", "reports"];
const REASONS = ["max_retries_exceeded", "permanent_failure", "job_not_found", "invalid_arguments"];

const file = process.argv[2] ?? join(mkdtempSync(join(tmpdir(), "soniq-reads-")), "seed.db");
rmSync(file, { force: true });
const migrate = sqliteBackend({ filename: file });
await migrate.migrations.apply();
await migrate.close();

const seedStart = performance.now();
const db = new Database(file);
const now = Date.now();
const job =
  db.prepare(`INSERT INTO soniq_jobs (id, job_name, args, status, attempts, max_attempts, queue, priority,
    unique_job, scheduled_at, result, producer_id, created_at, updated_at)
  VALUES (?, ?, ?, 'done', 1, 3, ?, 100, 0, ?, '{"ok":true}', 'seed', ?, ?)`);
const dead =
  db.prepare(`INSERT INTO soniq_dead_letter_jobs (id, job_name, args, queue, priority, max_attempts,
    attempts, last_error, dead_letter_reason, original_created_at, moved_to_dead_letter_at, created_at)
  VALUES (?, ?, '{}', ?, 100, 3, 3, 'Error: card declined', ?, ?, ?, ?)`);
const jobs = db.transaction((from: number, to: number) => {
  for (let g = from; g < to; g++) {
    const t = Math.round(now - SPAN_MS * (1 - g / JOBS));
    // Jobs list by id: core's ids are monotonic within a process, so they follow created_at here.
    job.run(newJobId(), NAMES[g % 4], `{"n":${g}}`, QUEUES[g % 4], t, t, t + 40);
  }
});
for (let i = 0; i < JOBS; i += 100_000) jobs(i, Math.min(JOBS, i + 100_000));
db.transaction(() => {
  for (let g = 0; g < DEAD; g++) {
    const t = Math.round(now - SPAN_MS * (1 - g / DEAD));
    dead.run(newJobId(), NAMES[g % 4], QUEUES[g % 4], REASONS[g % 4], t - 60_000, t, t);
  }
})();
db.exec("ANALYZE");
db.close();
console.log(`seeded ${file} in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`);

const soniq = new Soniq({ backend: sqliteBackend({ filename: file }) });
const startLoad = loadavg()[0]?.toFixed(2);
console.log("| call | median ms | worst ms |\n|---|---:|---:|");
async function time(label: string, call: () => Promise<unknown>): Promise<void> {
  await call();
  const ms: number[] = [];
  for (let i = 0; i < 5; i++) {
    const start = performance.now();
    await call();
    ms.push(performance.now() - start);
  }
  ms.sort((a, b) => a - b);
  console.log(`| ${label} | ${ms[2]?.toFixed(1)} | ${ms[4]?.toFixed(1)} |`);
}
const [deep] = await soniq.jobs.list({ offset: 499_999, limit: 1 });
if (!deep) throw new Error("the seed wrote no jobs");
await time("queues.list() (overview, /queues, /api/stats)", () => soniq.queues.list());
await time("jobs.stats() (exact, not used by the dashboard)", () => soniq.jobs.stats());
await time("jobs.list({ limit: 50 })", () => soniq.jobs.list({ limit: 50 }));
await time("jobs.list({ limit: 1000 })", () => soniq.jobs.list({ limit: 1000 }));
await time("jobs.list after job 500,000", () => soniq.jobs.list({ limit: 50, after: deep }));
await time("jobs.list before job 500,000", () => soniq.jobs.list({ limit: 50, before: deep }));
await time("jobs.list({ offset: 500,000 }) (compatibility)", () =>
  soniq.jobs.list({ limit: 50, offset: 500_000 }),
);
await time("jobs.list({ status: done })", () => soniq.jobs.list({ limit: 50, status: "done" }));
await time("jobs.list({ jobName: matches nothing })", () =>
  soniq.jobs.list({ limit: 50, jobName: "no.such_job" }),
);
await time("deadLetters.list({ limit: 50 })", () => soniq.deadLetters.list({ limit: 50 }));
await time("purgeWhere({}, { dryRun }) (counts 100,000)", () =>
  soniq.deadLetters.purgeWhere({}, { dryRun: true }),
);
console.log(`load average (1 min): ${startLoad} at the start, ${loadavg()[0]?.toFixed(2)} at the end`);
await soniq.close();
