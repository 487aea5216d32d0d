/**
 * The workloads. Each one checks its own outcome (every job started exactly once, storage agrees at the
 * end) and throws `InvalidRun` when it does not hold, so a broken run is never timed.
 *
 * W1 drain / W4 failure: bulk-enqueue N jobs with no worker running, check the storage holds N, start the
 *   worker, and time from the first handler start until the storage shows every job finished.
 *   W4 retry: the W4 drain with three attempts a job, retried at once: each job fails three times, then
 *   reaches the terminal failed state (every job must start exactly three times).
 *   W4's rates are over the jobs after the first tenth to start (`coldJobs`), which are reported apart: at a
 *   few thousand jobs a fresh worker's cold start (first query plans, V8's first stack traces) was most of it.
 *   The bulk enqueue of W1 is also the W2 bulk figure (N in batches of 1,000 onto an idle table).
 * W2 single: N single awaited enqueues, no worker.
 * W3 latency: idle worker, N jobs enqueued one every `intervalMs`; enqueue call to handler start.
 * W8 flow: one flow of N noop steps, N-1 parents fanning in to the last, started with no worker running (the
 *   start is timed: one transaction writing N steps and N-1 jobs); the child must not be pending before its
 *   parents are done. Then the worker starts, and the flow is timed from the first handler start until the
 *   storage shows nothing pending; the child must start exactly once, after every parent.
 * W9 steps: `n` jobs of `STEPS_PER_JOB` no-op durable steps, drained as W1 (bulk-enqueued, no worker running,
 *   timed from the first handler start until nothing is pending); every step's function must have run exactly
 *   once and the storage must hold every done checkpoint.
 * W9s sleep: `n` jobs that each sleep `SLEEP_MS` durably, drained the same way and timed from the first run of
 *   any job until nothing is pending; every job must have slept at least the sleep.
 * W5/W5b sweep: sweep.ts.
 * W7 steady: idle worker, jobs arriving at a fixed rate (bulk calls every 10 ms); pickup percentiles and the
 *   database's CPU time per 1,000 jobs.
 *
 * Drains and latency runs take `processes` (scale-out): that many worker hosts, each its own process with one
 * worker at `concurrency`, on the same storage. Their start reports are merged (each job started exactly once
 * across all of them), and the end is the storage showing nothing pending.
 */
import { now, sleep } from "./clock.js";
import { type DbCpuSampler, startDbCpu, walPosition } from "./db-cpu.js";
import type { HostClient } from "./host-client.js";
import type { StartReport } from "./host-protocol.js";
import { check, InvalidRun, type MeasureContext } from "./measure.js";
import { mergeReports } from "./start-report.js";
import { type Counts, SLEEP_MS, STEPS_PER_JOB, type TaskKind } from "./systems/types.js";

export interface DrainParams {
  kind: TaskKind;
  n: number;
  concurrency: number;
  batchSize: number;
  timeoutMs: number;
  /** W6: spread the jobs over this many queues (one worker serves them all). */
  queues?: number;
  /** Worker processes (default 1). */
  processes?: number;
  /**
   * W4: the first this many jobs to start are the "cold" part, reported apart (a fresh worker's first query
   * plans and V8's first stack traces), and the rate is over the jobs after them (`DrainResult.cold`).
   */
  coldJobs?: number;
}

export interface DrainResult {
  jobsPerSec: number;
  drainMs: number;
  /** From asking the worker to start to its first handler start (not part of the rate). */
  startupMs: number;
  bulkEnqueuePerSec: number;
  /** CPU per job over the drain (see `CpuWindow`). */
  cpu: CpuPerJob;
  /** What the worker hosts reported (W9 and W9s check their `steps` part). */
  report: StartReport;
  /** The clock when the storage first showed nothing pending. */
  settledAt: number;
  /** With `coldJobs`: the drain split at the start of the first job after the cold ones. */
  cold?: ColdSplit;
}

/** A drain split at the start of job `coldJobs + 1` (in start order): the jobs before it, and the rest. */
export interface ColdSplit {
  jobs: number;
  /** From the first handler start to the start of the first job after the cold ones. */
  coldMs: number;
  coldJobsPerSec: number;
  /** The jobs after the cold ones, from that start until the storage showed nothing pending. */
  warmJobsPerSec: number;
}

/** The cold split of a drain of `n` jobs from its per-job start times (see `DrainParams.coldJobs`). */
export function coldSplit(times: readonly number[], coldJobs: number, settledAt: number): ColdSplit {
  const sorted = [...times].sort((a, b) => a - b);
  check(coldJobs > 0 && coldJobs < sorted.length, `cold jobs ${coldJobs} of a drain of ${sorted.length}`);
  const first = sorted[0] as number;
  const warmFrom = sorted[coldJobs] as number;
  const coldMs = warmFrom - first;
  return {
    jobs: coldJobs,
    coldMs,
    coldJobsPerSec: coldJobs / (Math.max(coldMs, 0.001) / 1000),
    warmJobsPerSec: (sorted.length - coldJobs) / (Math.max(settledAt - warmFrom, 0.001) / 1000),
  };
}

/**
 * What a drain cost, per job, from asking the workers to start until the storage showed every job finished:
 * the worker processes' CPU (every thread; for in-process rows this includes the harness's cheap `settled`
 * polls), the store's server CPU (the PostgreSQL backends serving the measurement's database, or the
 * system's own store, e.g. Redis) and the WAL written (server-wide: other work on the server counts too).
 * Null where it cannot be read.
 */
export interface CpuPerJob {
  workerUs: number;
  storeUs: number | null;
  walBytes: number | null;
}

/** Readings taken at the start of a drain, turned into `CpuPerJob` at its end. */
async function startCpuWindow(
  ctx: MeasureContext,
  hosts: readonly HostClient[],
): Promise<(jobs: number) => Promise<CpuPerJob>> {
  const workers = async () =>
    (await Promise.all(hosts.map((h) => h.cpuSeconds()))).reduce((a, b) => a + b, 0);
  const store = ctx.system.storeCpuSeconds?.bind(ctx.system);
  const [worker0, store0, wal0, db] = await Promise.all([
    workers(),
    store ? store() : null,
    ctx.database ? walPosition(ctx.adminUrl) : null,
    ctx.database ? startDbCpu(ctx.adminUrl, ctx.database) : null,
  ]);
  return async (jobs) => {
    const [worker1, store1, wal1, dbSeconds] = await Promise.all([
      workers(),
      store ? store() : null,
      ctx.database ? walPosition(ctx.adminUrl) : null,
      db ? db.stop() : null,
    ]);
    const storeSeconds =
      store0 !== null && store1 !== null ? store1 - store0 : dbSeconds !== null ? dbSeconds : null;
    return {
      workerUs: ((worker1 - worker0) * 1e6) / jobs,
      storeUs: storeSeconds === null ? null : (storeSeconds * 1e6) / jobs,
      walBytes: wal0 !== null && wal1 !== null ? (wal1 - wal0) / jobs : null,
    };
  };
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
  if (kind !== "fail" && kind !== "retry") {
    check(c.failed === 0, `at the end: ${c.failed} jobs failed`);
    if (c.done !== null) check(c.done === n, `at the end: ${c.done} jobs done, expected ${n}`);
    else check(c.distinct === 0, `at the end: ${c.distinct} jobs left in a table that deletes done jobs`);
  } else {
    check(c.failed === n, `at the end: ${c.failed} jobs in the failed state, expected ${n}`);
    check(c.done === null || c.done === 0, `at the end: ${c.done} failing jobs marked done`);
  }
}

/** Resets start tracking and builds (but does not start) one worker in each host. */
async function prepareWorkers(
  hosts: readonly HostClient[],
  kind: TaskKind,
  n: number,
  concurrency: number,
  recordTimes: boolean,
): Promise<void> {
  const shared = hosts.length > 1;
  await Promise.all(
    hosts.map(async (host) => {
      await host.track(kind, n, recordTimes, shared);
      await host.call({ op: "createWorker", concurrency });
    }),
  );
}

async function startWorkers(hosts: readonly HostClient[]): Promise<void> {
  await Promise.all(hosts.map((host) => host.call({ op: "startWorker" })));
}

/**
 * With one host, waits for its "every job started" event (several hosts only see their share); a timeout
 * says how far the run got.
 */
async function waitAllStarted(
  ctx: MeasureContext,
  hosts: readonly HostClient[],
  kind: TaskKind,
  timeoutMs: number,
): Promise<void> {
  if (hosts.length !== 1) return;
  try {
    await (hosts[0] as HostClient).waitAllStarted(timeoutMs);
  } catch (err) {
    const c = await ctx.producer.counts(kind).catch(() => null);
    const left = c ? `: ${c.pending} jobs still pending` : "";
    throw new InvalidRun(`${err instanceof Error ? err.message : String(err)}${left}`);
  }
}

/** Stops the workers and checks that every expected job started exactly once (across all hosts). */
async function stopAndCheckStarts(hosts: readonly HostClient[], recordTimes: boolean) {
  await Promise.all(hosts.map((host) => host.call({ op: "stopWorker" })));
  const report = mergeReports(await Promise.all(hosts.map((host) => host.report())));
  check(
    report.missing === 0,
    report.runsPerJob === 1
      ? `${report.missing} jobs never started`
      : `${report.missing} jobs started fewer than ${report.runsPerJob} times`,
  );
  check(report.duplicates === 0, `${report.duplicates} jobs started more than once`);
  check(report.unexpected === 0, `${report.unexpected} unexpected job starts`);
  check(!recordTimes || report.startTimes !== null, "start times were not recorded");
  return report;
}

export interface FanInResult {
  /** `flows.start` of the whole flow (no worker running). */
  startMs: number;
  /** From the first handler start until nothing is pending (the child is the last to finish). */
  flowMs: number;
}

export async function runFanIn(
  ctx: MeasureContext,
  p: { n: number; concurrency: number; timeoutMs: number },
): Promise<FanInResult> {
  const hosts = await ctx.hosts(1);
  await prepareWorkers(hosts, "noop", p.n, p.concurrency, true);
  const started = await ctx.producer.produce({ mode: "fan-in", kind: "noop", n: p.n });
  // The parents are queued; the child waits (no job yet, not pending) until its last parent is done.
  await checkEnqueued(ctx, "noop", p.n - 1);
  const goAt = now();
  await startWorkers(hosts);
  await waitAllStarted(ctx, hosts, "noop", p.timeoutMs);
  const settledAt = await waitSettled(ctx, "noop", goAt + p.timeoutMs);
  const report = await stopAndCheckStarts(hosts, true);
  await checkFinal(ctx, "noop", p.n);
  const times = report.startTimes as number[];
  const child = times[p.n - 1] as number;
  const lastParent = Math.max(...times.slice(0, p.n - 1));
  check(
    child >= lastParent,
    `the child started ${(lastParent - child).toFixed(1)} ms before its last parent`,
  );
  return { startMs: started.elapsedMs, flowMs: settledAt - (report.firstStartAt ?? goAt) };
}

export async function runDrain(ctx: MeasureContext, p: DrainParams): Promise<DrainResult> {
  const hosts = await ctx.hosts(p.processes ?? 1);
  const recordTimes = p.coldJobs !== undefined;
  await prepareWorkers(hosts, p.kind, p.n, p.concurrency, recordTimes);
  const enqueue = await ctx.producer.produce({
    mode: "batches",
    kind: p.kind,
    n: p.n,
    batchSize: p.batchSize,
    ...(p.queues ? { queues: p.queues } : {}),
  });
  await checkEnqueued(ctx, p.kind, p.n);
  const cpuWindow = await startCpuWindow(ctx, hosts);
  const goAt = now();
  const deadline = goAt + p.timeoutMs;
  await startWorkers(hosts);
  await waitAllStarted(ctx, hosts, p.kind, p.timeoutMs);
  const settledAt = await waitSettled(ctx, p.kind, deadline);
  const cpu = await cpuWindow(p.n);
  const report = await stopAndCheckStarts(hosts, recordTimes);
  await checkFinal(ctx, p.kind, p.n);
  const first = report.firstStartAt ?? goAt;
  const drainMs = settledAt - first;
  return {
    jobsPerSec: p.n / (drainMs / 1000),
    drainMs,
    startupMs: first - goAt,
    bulkEnqueuePerSec: p.n / (enqueue.elapsedMs / 1000),
    cpu,
    report,
    settledAt,
    ...(p.coldJobs === undefined
      ? {}
      : { cold: coldSplit(report.startTimes as number[], p.coldJobs, settledAt) }),
  };
}

export interface StepsDrainResult {
  stepsPerSec: number;
  jobsPerSec: number;
  drainMs: number;
  startupMs: number;
  /** CPU over the drain per step (a job's claim and completion included: per job ÷ `STEPS_PER_JOB`). */
  cpuPerStep: CpuPerJob;
  /** The same per job of `STEPS_PER_JOB` steps. */
  cpuPerJob: CpuPerJob;
}

function perStep(cpu: CpuPerJob): CpuPerJob {
  const per = (v: number | null) => (v === null ? null : v / STEPS_PER_JOB);
  return { workerUs: cpu.workerUs / STEPS_PER_JOB, storeUs: per(cpu.storeUs), walBytes: per(cpu.walBytes) };
}

/** W9: see the top of this file. */
export async function runStepsDrain(
  ctx: MeasureContext,
  p: Omit<DrainParams, "kind" | "queues" | "processes">,
): Promise<StepsDrainResult> {
  const r = await runDrain(ctx, { ...p, kind: "steps" });
  const steps = r.report.steps;
  const want = p.n * STEPS_PER_JOB;
  check(steps !== null && steps !== undefined, "the worker reported no step runs");
  check(
    steps?.stepRuns === want && steps.stepsNotOnce === 0,
    `${steps?.stepsNotOnce} of ${want} steps ran their function other than exactly once (${steps?.stepRuns} runs)`,
  );
  const stored = await ctx.producer.stepCounts("steps");
  check(stored.done === want, `the storage holds ${stored.done} done step checkpoints, expected ${want}`);
  return {
    stepsPerSec: want / (r.drainMs / 1000),
    jobsPerSec: r.jobsPerSec,
    drainMs: r.drainMs,
    startupMs: r.startupMs,
    cpuPerStep: perStep(r.cpu),
    cpuPerJob: r.cpu,
  };
}

/** A job's sleep may end this much before `SLEEP_MS` by the worker's clock (wake times are wall-clock instants). */
const SLEEP_TOLERANCE_MS = 50;

export interface SleepDrainResult {
  /** From the first run of any job until nothing is pending. */
  totalMs: number;
  startupMs: number;
  /** Handler runs a job: 1 where the sleep waits in process, 2 where the job is run again at its wake time. */
  runsPerJob: number;
  /** The shortest first-run-to-woken time of any job. */
  minSleptMs: number;
  /** The most runs in progress at once (at most the concurrency, or the run is INVALID). */
  maxRunning: number;
  /** From the first job's first run to the last job's first run. */
  firstRunsSpanMs: number;
  /** The median first-run-to-woken time. */
  medianSleptMs: number;
}

/** W9s: see the top of this file. */
export async function runSleepDrain(
  ctx: MeasureContext,
  p: Omit<DrainParams, "kind" | "queues" | "processes">,
): Promise<SleepDrainResult> {
  const r = await runDrain(ctx, { ...p, kind: "sleep" });
  const s = r.report.steps;
  check(
    s !== null && s !== undefined && s.firstRunAt !== null && s.minSleptMs !== null,
    "the worker reported no runs",
  );
  const firstRunAt = s?.firstRunAt as number;
  const minSleptMs = s?.minSleptMs as number;
  check(s !== null && s !== undefined && s.runs >= p.n, `${s?.runs} handler runs for ${p.n} jobs`);
  check(
    (s?.maxRunning ?? 0) <= p.concurrency,
    `${s?.maxRunning} handler runs were in progress at once at concurrency ${p.concurrency}`,
  );
  check(
    minSleptMs >= SLEEP_MS - SLEEP_TOLERANCE_MS,
    `a job woke ${minSleptMs.toFixed(0)} ms after its first run, before its ${SLEEP_MS} ms sleep was over`,
  );
  return {
    totalMs: r.settledAt - firstRunAt,
    startupMs: firstRunAt - (r.settledAt - r.drainMs - r.startupMs),
    runsPerJob: (s?.runs ?? 0) / p.n,
    minSleptMs,
    maxRunning: s?.maxRunning ?? 0,
    firstRunsSpanMs: s?.firstRunsSpanMs ?? 0,
    medianSleptMs: s?.medianSleptMs ?? minSleptMs,
  };
}

export async function runSingleEnqueue(
  ctx: MeasureContext,
  n: number,
  async = false,
): Promise<{ jobsPerSec: number }> {
  const result = await ctx.producer.produce({ mode: "sequential", kind: "noop", n, async });
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
  /** Worker processes (default 1). */
  processes?: number;
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

/** Per job, enqueue call to first handler start, sorted. */
function pickups(
  enqueuedAt: readonly number[] | null,
  starts: readonly number[] | null,
  n: number,
): number[] {
  check(enqueuedAt?.length === n, "enqueue times missing");
  const latencies = (starts ?? []).map((s, i) => s - (enqueuedAt?.[i] as number)).sort((a, b) => a - b);
  check(
    latencies.every((l) => l >= 0),
    "a job started before its enqueue began (clock mismatch)",
  );
  return latencies;
}

export async function runLatency(ctx: MeasureContext, p: LatencyParams): Promise<LatencyResult> {
  const hosts = await ctx.hosts(p.processes ?? 1);
  await prepareWorkers(hosts, "noop", p.n, p.concurrency, true);
  await startWorkers(hosts);
  await sleep(p.idleMs);
  const produced = await ctx.producer.produce({
    mode: "paced",
    kind: "noop",
    n: p.n,
    intervalMs: p.intervalMs,
  });
  await waitAllStarted(ctx, hosts, "noop", p.timeoutMs);
  await waitSettled(ctx, "noop", now() + p.timeoutMs);
  const report = await stopAndCheckStarts(hosts, true);
  await checkFinal(ctx, "noop", p.n);
  const latencies = pickups(produced.enqueuedAt, report.startTimes, p.n);
  return {
    p50: percentile(latencies, 0.5),
    p95: percentile(latencies, 0.95),
    p99: percentile(latencies, 0.99),
    max: latencies[latencies.length - 1] ?? Number.NaN,
  };
}

export interface SteadyParams {
  ratePerSec: number;
  seconds: number;
  concurrency: number;
  idleMs: number;
  timeoutMs: number;
}

export interface SteadyResult {
  p50: number;
  p99: number;
  /** Database CPU seconds per 1,000 jobs (db-cpu.ts), or null without a readable server. */
  dbCpuPer1k: number | null;
  /** The arrival rate the producer achieved, jobs/s. */
  arrivalPerSec: number;
}

/** Arrivals below this share of the asked rate make the run INVALID (it would not be the rate asked). */
const MIN_ARRIVAL_SHARE = 0.9;

/**
 * W7: the worker runs idle, then jobs arrive at `ratePerSec` for `seconds`. The database's CPU is sampled
 * from the first arrival until the storage shows every job done.
 */
export async function runSteady(ctx: MeasureContext, p: SteadyParams): Promise<SteadyResult> {
  const n = Math.round(p.ratePerSec * p.seconds);
  const hosts = await ctx.hosts(1);
  await prepareWorkers(hosts, "noop", n, p.concurrency, true);
  await startWorkers(hosts);
  await sleep(p.idleMs);
  const cpu: DbCpuSampler | null = ctx.database ? await startDbCpu(ctx.adminUrl, ctx.database) : null;
  const produced = await ctx.producer.produce({
    mode: "steady",
    kind: "noop",
    n,
    ratePerSec: p.ratePerSec,
    tickMs: 10,
  });
  await waitAllStarted(ctx, hosts, "noop", p.timeoutMs);
  await waitSettled(ctx, "noop", now() + p.timeoutMs);
  const cpuSeconds = cpu ? await cpu.stop() : null;
  const report = await stopAndCheckStarts(hosts, true);
  await checkFinal(ctx, "noop", n);
  const arrivalPerSec = n / (produced.elapsedMs / 1000);
  check(
    arrivalPerSec >= MIN_ARRIVAL_SHARE * p.ratePerSec,
    `jobs arrived at ${arrivalPerSec.toFixed(0)}/s, under ${MIN_ARRIVAL_SHARE * 100} % of ${p.ratePerSec}/s`,
  );
  const latencies = pickups(produced.enqueuedAt, report.startTimes, n);
  return {
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    dbCpuPer1k: cpuSeconds === null ? null : cpuSeconds / (n / 1000),
    arrivalPerSec,
  };
}
