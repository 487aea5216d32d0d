/**
 * The workloads. Each one checks its own outcome (every job started exactly once, storage agrees at the
 * end) and throws `InvalidRun` when it does not hold, so a broken run is never timed.
 *
 * W1 drain / W4 failure: bulk-enqueue N jobs with no worker running, check the storage holds N, start the
 *   worker, and time from the first handler start until the storage shows every job finished.
 *   The bulk enqueue of W1 is also the W2 bulk figure (N in batches of 1,000 onto an idle table).
 * W2 single: N single awaited enqueues, no worker.
 * W3 latency: idle worker, N jobs enqueued one every `intervalMs`; enqueue call to handler start.
 */
import { now, sleep } from "./clock.js";
import { check, type MeasureContext } from "./measure.js";
import type { Counts, TaskKind } from "./systems/types.js";

export interface DrainParams {
  kind: TaskKind;
  n: number;
  concurrency: number;
  batchSize: number;
  timeoutMs: number;
}

export interface DrainResult {
  jobsPerSec: number;
  drainMs: number;
  /** From asking the worker to start to its first handler start (not part of the rate). */
  startupMs: number;
  bulkEnqueuePerSec: number;
}

function checkDistinct(c: Counts, n: number, when: string): void {
  if (c.distinct !== null)
    check(c.distinct === n, `${when}: storage holds ${c.distinct} distinct jobs, expected ${n}`);
}

async function checkEnqueued(ctx: MeasureContext, kind: TaskKind, n: number): Promise<void> {
  const c = await ctx.producer.counts(kind);
  check(c.pending === n, `after enqueue: ${c.pending} pending jobs, expected ${n}`);
  checkDistinct(c, n, "after enqueue");
}

/**
 * Polls until nothing is pending; returns the clock reading when that was seen. The poll is the cheap
 * `settled` check (the full `counts` with its DISTINCT over every row cost Postgres about 19 ms per poll on
 * 20,000 rows, so polling every 2 ms kept one of two cores busy with the harness during the timed drain).
 */
async function waitSettled(ctx: MeasureContext, kind: TaskKind, deadline: number): Promise<number> {
  for (;;) {
    if (await ctx.producer.settled(kind)) return now();
    if (now() >= deadline) {
      const c = await ctx.producer.counts(kind);
      check(false, `timed out with ${c.pending} jobs pending`);
    }
    await sleep(2);
  }
}

async function checkFinal(ctx: MeasureContext, kind: TaskKind, n: number): Promise<void> {
  const c = await ctx.producer.counts(kind);
  check(c.pending === 0, `at the end: ${c.pending} jobs still pending`);
  if (kind === "noop") {
    check(c.failed === 0, `at the end: ${c.failed} jobs failed`);
    if (c.done !== null) check(c.done === n, `at the end: ${c.done} jobs done, expected ${n}`);
    else check(c.distinct === 0, `at the end: ${c.distinct} jobs left in a table that deletes done jobs`);
  } else {
    check(c.failed === n, `at the end: ${c.failed} jobs in the failed state, expected ${n}`);
    check(c.done === null || c.done === 0, `at the end: ${c.done} failing jobs marked done`);
  }
}

/** Stops the worker and checks that every expected job started exactly once. */
async function stopAndCheckStarts(ctx: MeasureContext, recordTimes: boolean) {
  const host = await ctx.host();
  await host.call({ op: "stopWorker" });
  const report = await host.report();
  check(report.missing === 0, `${report.missing} jobs never started`);
  check(report.duplicates === 0, `${report.duplicates} jobs started more than once`);
  check(report.unexpected === 0, `${report.unexpected} unexpected job starts`);
  check(!recordTimes || report.startTimes !== null, "start times were not recorded");
  return report;
}

export async function runDrain(ctx: MeasureContext, p: DrainParams): Promise<DrainResult> {
  const host = await ctx.host();
  await host.track(p.kind, p.n, false);
  await host.call({ op: "createWorker", concurrency: p.concurrency });
  const enqueue = await ctx.producer.produce({
    mode: "batches",
    kind: p.kind,
    n: p.n,
    batchSize: p.batchSize,
  });
  await checkEnqueued(ctx, p.kind, p.n);
  const goAt = now();
  const deadline = goAt + p.timeoutMs;
  await host.call({ op: "startWorker" });
  await host.waitAllStarted(p.timeoutMs);
  const settledAt = await waitSettled(ctx, p.kind, deadline);
  const report = await stopAndCheckStarts(ctx, false);
  await checkFinal(ctx, p.kind, p.n);
  const first = report.firstStartAt ?? goAt;
  const drainMs = settledAt - first;
  return {
    jobsPerSec: p.n / (drainMs / 1000),
    drainMs,
    startupMs: first - goAt,
    bulkEnqueuePerSec: p.n / (enqueue.elapsedMs / 1000),
  };
}

export async function runSingleEnqueue(ctx: MeasureContext, n: number): Promise<{ jobsPerSec: number }> {
  const result = await ctx.producer.produce({ mode: "sequential", kind: "noop", n });
  await checkEnqueued(ctx, "noop", n);
  return { jobsPerSec: n / (result.elapsedMs / 1000) };
}

export interface LatencyParams {
  n: number;
  intervalMs: number;
  concurrency: number;
  /** How long the started worker sits idle before the first job. */
  idleMs: number;
  timeoutMs: number;
}

export interface LatencyResult {
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] as number;
}

export async function runLatency(ctx: MeasureContext, p: LatencyParams): Promise<LatencyResult> {
  const host = await ctx.host();
  await host.track("noop", p.n, true);
  await host.call({ op: "createWorker", concurrency: p.concurrency });
  await host.call({ op: "startWorker" });
  await sleep(p.idleMs);
  const produced = await ctx.producer.produce({
    mode: "paced",
    kind: "noop",
    n: p.n,
    intervalMs: p.intervalMs,
  });
  await host.waitAllStarted(p.timeoutMs);
  await waitSettled(ctx, "noop", now() + p.timeoutMs);
  const report = await stopAndCheckStarts(ctx, true);
  await checkFinal(ctx, "noop", p.n);
  const enqueuedAt = produced.enqueuedAt ?? [];
  const starts = report.startTimes ?? [];
  check(enqueuedAt.length === p.n, "enqueue times missing");
  const latencies = starts.map((s, i) => s - (enqueuedAt[i] as number)).sort((a, b) => a - b);
  check(
    latencies.every((l) => l >= 0),
    "a job started before its enqueue began (clock mismatch)",
  );
  return {
    p50: percentile(latencies, 0.5),
    p95: percentile(latencies, 0.95),
    p99: percentile(latencies, 0.99),
    max: latencies[latencies.length - 1] ?? Number.NaN,
  };
}
