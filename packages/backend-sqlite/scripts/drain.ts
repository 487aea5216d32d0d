/**
 * Drain throughput on a temp file: enqueue 10,000 no-op jobs, then drain them with at most 10
 * handlers in flight, claiming in batches (up to the free slots) and completing in batches.
 *
 *   pnpm exec tsx --conditions=source packages/backend-sqlite/scripts/drain.ts [jobs] [concurrency] [queues]
 *
 * `queues` is `default` (one queue, the fetch index serves the order) or `all` (queues: null).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sqliteBackend } from "@soniq/backend-sqlite";
import type { Job } from "@soniq/core";
import type { Backend, DoneSettlement } from "@soniq/core/backend";
import { newJob } from "@soniq/testkit";

const total = Number(process.argv[2] ?? 10_000);
const concurrency = Number(process.argv[3] ?? 10);
const queues = process.argv[4] === "all" ? null : ["default"];

const noopJob = () => newJob({ jobName: "bench.noop", args: {} });

async function drain(backend: Backend<unknown>): Promise<void> {
  let inFlight = 0;
  let finished = 0;
  let toComplete: DoneSettlement[] = [];
  const run = async (job: Job) => {
    await Promise.resolve(); // the no-op handler
    toComplete.push({ kind: "done", id: job.id, attempt: job.attempts, result: null, resultTtlMs: 60_000 });
    inFlight--;
  };
  while (finished < total) {
    const free = concurrency - inFlight;
    if (free > 0) {
      const jobs = (await backend.runs.claim({ queues, limit: free, workerId: null })).jobs;
      inFlight += jobs.length;
      for (const job of jobs) void run(job);
    }
    await new Promise((resolve) => setImmediate(resolve));
    if (toComplete.length > 0) {
      const batch = toComplete;
      toComplete = [];
      finished += (await backend.runs.settle(batch)).filter(Boolean).length;
    }
  }
}

const dir = mkdtempSync(join(tmpdir(), "soniq-drain-"));
const backend = sqliteBackend({ filename: join(dir, "drain.db") });
try {
  await backend.migrations.apply();
  const jobs = Array.from({ length: total }, noopJob);
  const t0 = performance.now();
  for (let i = 0; i < jobs.length; i += 1000) await backend.jobs.enqueueMany(jobs.slice(i, i + 1000), {});
  const t1 = performance.now();
  const cpu0 = process.cpuUsage();
  await drain(backend);
  const t2 = performance.now();
  const cpu = process.cpuUsage(cpu0);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  // Single enqueues last, so the drain above never sees them.
  const singles = Array.from({ length: 2000 }, noopJob);
  const s0 = performance.now();
  for (const job of singles) await backend.jobs.enqueue(job, {});
  const s1 = performance.now();
  const stats = await backend.jobs.stats({ queue: null });
  if (stats.done !== total || stats.queued !== singles.length)
    throw new Error(`expected ${total} done, got ${JSON.stringify(stats)}`);
  const rate = (n: number, ms: number) => Math.round((n / ms) * 1000).toLocaleString("en-US");
  console.log(`enqueue (one at a time): ${rate(singles.length, s1 - s0)} jobs/s`);
  console.log(`enqueueMany (batches of 1000): ${rate(total, t1 - t0)} jobs/s`);
  console.log(
    `drain ${total} no-op jobs, concurrency ${concurrency}, queues ${queues ? queues.join(",") : "all"}: ` +
      `${rate(total, t2 - t1)} jobs/s (${Math.round(t2 - t1)} ms wall, ${Math.round(cpuMs)} ms CPU: ` +
      `${rate(total, cpuMs)} jobs per CPU-second; less sensitive to a busy machine than wall time)`,
  );
} finally {
  await backend.close();
  rmSync(dir, { recursive: true, force: true });
}
