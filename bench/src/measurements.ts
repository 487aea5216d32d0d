/**
 * What each workload id measures, on which systems it applies, and the metrics it returns (the names the
 * report and the JSON use). Every measurement runs on fresh storage (`withMeasurement`); a workload that
 * needs two setups (scale-out: a drain, then a latency run) takes two.
 */
import { now } from "./clock.js";
import { check, type MeasureContext, withMeasurement } from "./measure.js";
import { type BenchOptions, scaleProcesses, steadyRate, type WorkloadId } from "./options.js";
import { runSweep } from "./sweep.js";
import { type QueueLimit, SLEEP_MS, STEPS_PER_JOB, type SystemAdapter } from "./systems/types.js";
import {
  type ColdSplit,
  type CpuPerJob,
  type DrainParams,
  runDrain,
  runFanIn,
  runLatency,
  runSingleEnqueue,
  runSleepDrain,
  runSteady,
  runStepsDrain,
} from "./workloads.js";

/** The CPU-per-job metrics of a drain, under `prefix` (`c10`, `fail`, ...). */
function cpuMetrics(prefix: string, cpu: CpuPerJob): Metrics {
  const out: Metrics = { [`${prefix}_worker_cpu_us`]: cpu.workerUs };
  if (cpu.storeUs !== null) out[`${prefix}_store_cpu_us`] = cpu.storeUs;
  if (cpu.walBytes !== null) out[`${prefix}_wal_bytes`] = cpu.walBytes;
  return out;
}

/** Metric names, as they appear in the JSON. Rates are jobs/s, latencies ms, CPU seconds. */
export type Metrics = Record<string, number>;

/** W4: the share of the jobs, the first to start, reported apart as the cold start. */
const COLD_SHARE = 0.1;

/** A drain that takes longer is INVALID (timed out). The smoke run gives up sooner. */
const DRAIN_TIMEOUT_MS = 120_000;
const QUICK_DRAIN_TIMEOUT_MS = 30_000;
/**
 * W9s: a system whose sleeping job holds its worker slot needs n / concurrency sleeps one after another (1,000
 * jobs at concurrency 10: 100 sleeps, 200 s); that is a figure to report, not a broken run, so the timeout allows
 * it with room to spare.
 */
function sleepTimeoutMs(n: number, concurrency: number): number {
  return 60_000 + 2 * Math.ceil(n / concurrency) * SLEEP_MS;
}

/** w1-limited: limits that never bind at concurrency 10, so the drain measures what checking them costs. */
const LIMITS: Record<"w1-limited-conc" | "w1-limited-rate", { metric: string; limit: QueueLimit }> = {
  "w1-limited-conc": { metric: "drain_c10_conc50", limit: { concurrency: 50 } },
  "w1-limited-rate": { metric: "drain_c10_rate", limit: { rateLimit: { max: 1_000_000, perMs: 1000 } } },
};

/** W5/W5b's sweep: expired rows seeded after the drain, as this share of the retained rows. */
const EXPIRED_SHARE = 0.1;

/**
 * W5/W5b: `rows` done rows seeded into the table, then the W1 c10 drain. Then, where the system has a
 * retention sweep of its own, a tenth as many done rows whose retention ran out are seeded (the worker is
 * stopped by then, so its maintenance cannot sweep them first) and one sweep is timed: its time, the rows
 * it deleted (exactly the expired ones, or the run is INVALID), and the database's CPU over it.
 */
async function retained(
  ctx: MeasureContext,
  system: SystemAdapter,
  drain: DrainParams,
  rows: number,
  names: { drain: string; rows: string; sweep: string },
): Promise<Metrics> {
  const seededAt = now();
  if (system.seedDone) await system.seedDone(ctx.target, rows);
  const seedMs = now() - seededAt;
  const r = await runDrain(ctx, drain);
  const out: Metrics = {
    [names.drain]: r.jobsPerSec,
    [`${names.drain}_startup_ms`]: r.startupMs,
    [`${names.rows}_rows`]: system.seedDone ? rows : 0,
    [`${names.rows}_seed_ms`]: seedMs,
  };
  if (!system.seedExpired || !system.openSweep) return out;
  const expired = Math.round(rows * EXPIRED_SHARE);
  await system.seedExpired(ctx.target, expired);
  const sweep = await runSweep(ctx, system.openSweep.bind(system));
  check(sweep.rows === expired, `the sweep deleted ${sweep.rows} rows, expected the ${expired} expired ones`);
  // The drain's own done rows are still there (their retention has not run out).
  const c = await ctx.producer.counts(drain.kind);
  check(
    c.done === null || c.done === drain.n,
    `after the sweep: ${c.done} drained jobs left, expected ${drain.n}`,
  );
  out[`${names.sweep}_ms`] = sweep.ms;
  out[`${names.sweep}_rows`] = sweep.rows;
  out[`${names.sweep}_us_per_row`] = (sweep.ms * 1000) / Math.max(1, sweep.rows);
  if (sweep.dbCpuSeconds !== null) out[`${names.sweep}_db_cpu_ms`] = sweep.dbCpuSeconds * 1000;
  return out;
}

/** Whether `workload` runs on `system`; one that does not is skipped (no sample, "—" in the table). */
export function applies(system: SystemAdapter, workload: WorkloadId): boolean {
  if (workload === "w9" || workload === "w9s") return system.steps === true;
  // A durable-execution engine beside the queues runs W9 and W9s only.
  if (system.stepsOnly) return false;
  if (workload === "w5" || workload === "w5b")
    return system.seedDone !== undefined || system.deletesDone === true;
  if (workload === "w6") return system.manyQueues === true;
  if (workload === "w4-retry") return system.immediateRetries === true;
  if (workload === "w1-limited-conc" || workload === "w1-limited-rate") return system.queueLimits === true;
  if (workload === "w8") return system.flows === true;
  if (workload === "w2-single-async") return system.asyncEnqueue === true;
  // Several worker processes on one storage need a database server.
  if (scaleProcesses(workload) !== null) return system.storage === "postgres" && !system.inProcess;
  return true;
}

export async function measure(
  system: SystemAdapter,
  workload: WorkloadId,
  opts: BenchOptions,
): Promise<Metrics> {
  const s = opts.sizes;
  const timeoutMs = opts.quick ? QUICK_DRAIN_TIMEOUT_MS : DRAIN_TIMEOUT_MS;
  const scaled = (n: number) => Math.max(1, Math.round(n * (system.drainScale ?? 1)));
  const url = opts.databaseUrl;
  const drain = {
    kind: "noop",
    n: scaled(s.drainJobs),
    concurrency: 10,
    batchSize: s.bulkBatch,
    timeoutMs,
  } as const;
  const latency = {
    n: s.latencyJobs,
    intervalMs: s.latencyIntervalMs,
    concurrency: 10,
    idleMs: opts.quick ? 200 : 500,
    timeoutMs: 30_000,
  };

  const rate = steadyRate(workload);
  if (rate !== null) {
    return withMeasurement(system, url, true, async (ctx) => {
      const r = await runSteady(ctx, {
        ratePerSec: rate,
        seconds: s.steadySeconds,
        concurrency: 10,
        idleMs: latency.idleMs,
        timeoutMs,
      });
      const out: Metrics = {
        [`steady_${rate}_p50`]: r.p50,
        [`steady_${rate}_p99`]: r.p99,
        [`steady_${rate}_arrival`]: r.arrivalPerSec,
      };
      if (r.dbCpuPer1k !== null) out[`steady_${rate}_db_cpu_per_1k`] = r.dbCpuPer1k;
      return out;
    });
  }
  if (workload === "w8") {
    // The flow, then the same number of plain jobs drained on fresh storage: the per-step cost of the flow.
    const n = s.flowSteps;
    const flow = await withMeasurement(system, url, true, (ctx) =>
      runFanIn(ctx, { n, concurrency: 10, timeoutMs }),
    );
    const plain = await withMeasurement(system, url, true, (ctx) => runDrain(ctx, { ...drain, n }));
    return {
      flow_start_ms: flow.startMs,
      flow_ms: flow.flowMs,
      flow_per_step_us: (flow.flowMs * 1000) / n,
      flow_plain_per_job_us: (plain.drainMs * 1000) / n,
    };
  }
  if (workload === "w9") {
    // N jobs of STEPS_PER_JOB steps, then N plain jobs on fresh storage: the cost of a step beside a job's.
    const n = s.stepJobs;
    const steps = await withMeasurement(system, url, true, (ctx) => runStepsDrain(ctx, { ...drain, n }));
    const plain = await withMeasurement(system, url, true, (ctx) => runDrain(ctx, { ...drain, n }));
    const out: Metrics = {
      w9_steps_per_sec: steps.stepsPerSec,
      w9_jobs_per_sec: steps.jobsPerSec,
      w9_startup_ms: steps.startupMs,
      w9_worker_cpu_us_per_step: steps.cpuPerStep.workerUs,
      w9_plain_jobs_per_sec: plain.jobsPerSec,
      w9_plain_worker_cpu_us_per_job: plain.cpu.workerUs,
    };
    const storeStep = steps.cpuPerStep.storeUs;
    const storePlain = plain.cpu.storeUs;
    if (storeStep !== null) out.w9_store_cpu_us_per_step = storeStep;
    if (storePlain !== null) out.w9_plain_store_cpu_us_per_job = storePlain;
    // What a step adds to a job: (a job of N steps - a plain job) / N; left out when the noise makes it negative.
    const storeJob = steps.cpuPerJob.storeUs;
    if (storeJob !== null && storePlain !== null && storeJob > storePlain)
      out.w9_store_cpu_us_per_added_step = (storeJob - storePlain) / STEPS_PER_JOB;
    if (steps.cpuPerStep.walBytes !== null) out.w9_wal_bytes_per_step = steps.cpuPerStep.walBytes;
    if (plain.cpu.walBytes !== null) out.w9_plain_wal_bytes_per_job = plain.cpu.walBytes;
    return out;
  }
  if (workload === "w9s") {
    // N sleeping jobs, then N plain jobs on fresh storage: the ideal is the sleep plus that drain.
    const n = s.sleepJobs;
    const sleep = await withMeasurement(system, url, true, (ctx) =>
      runSleepDrain(ctx, { ...drain, n, timeoutMs: sleepTimeoutMs(n, drain.concurrency) }),
    );
    const plain = await withMeasurement(system, url, true, (ctx) => runDrain(ctx, { ...drain, n }));
    const ideal = SLEEP_MS + plain.drainMs;
    return {
      w9s_ms: sleep.totalMs,
      w9s_ideal_ms: ideal,
      w9s_vs_ideal_x: sleep.totalMs / ideal,
      w9s_plain_drain_ms: plain.drainMs,
      w9s_runs_per_job_x: sleep.runsPerJob,
      w9s_min_slept_ms: sleep.minSleptMs,
      w9s_max_running: sleep.maxRunning,
      w9s_first_runs_span_ms: sleep.firstRunsSpanMs,
      w9s_median_slept_ms: sleep.medianSleptMs,
      w9s_startup_ms: sleep.startupMs,
    };
  }
  const processes = scaleProcesses(workload);
  if (processes !== null) {
    const d = await withMeasurement(system, url, true, (ctx) => runDrain(ctx, { ...drain, processes }));
    const l = await withMeasurement(system, url, true, (ctx) => runLatency(ctx, { ...latency, processes }));
    return {
      [`scale_${processes}_drain`]: d.jobsPerSec,
      [`scale_${processes}_startup_ms`]: d.startupMs,
      [`scale_${processes}_p50`]: l.p50,
      [`scale_${processes}_p99`]: l.p99,
    };
  }

  const enqueueOnly = workload === "w2-single" || workload === "w2-single-async";
  return withMeasurement(system, url, !enqueueOnly, async (ctx): Promise<Metrics> => {
    switch (workload) {
      case "w1-c10":
      case "w1-c50": {
        const concurrency = workload === "w1-c10" ? 10 : 50;
        const r = await runDrain(ctx, { ...drain, concurrency });
        return {
          [`drain_c${concurrency}`]: r.jobsPerSec,
          [`drain_c${concurrency}_startup_ms`]: r.startupMs,
          bulk_enqueue: r.bulkEnqueuePerSec,
          ...cpuMetrics(`c${concurrency}`, r.cpu),
        };
      }
      case "w2-single":
        return { single_enqueue: (await runSingleEnqueue(ctx, s.singleEnqueues)).jobsPerSec };
      case "w2-single-async":
        return { single_enqueue_async: (await runSingleEnqueue(ctx, s.singleEnqueues, true)).jobsPerSec };
      case "w3": {
        const r = await runLatency(ctx, latency);
        return { latency_p50: r.p50, latency_p95: r.p95, latency_p99: r.p99, latency_max: r.max };
      }
      case "w4":
      case "w4-retry": {
        // The rate is over the jobs after the first tenth (the cold start, reported apart); for W4 retry it
        // counts jobs: each of them ran RETRY_ATTEMPTS times before its dead letter.
        const metric = workload === "w4" ? "fail" : "retry";
        const n = scaled(s.failJobs);
        const r = await runDrain(ctx, {
          ...drain,
          kind: metric,
          n,
          coldJobs: Math.max(1, Math.round(n * COLD_SHARE)),
        });
        const cold = r.cold as ColdSplit;
        return {
          [metric]: cold.warmJobsPerSec,
          [`${metric}_cold`]: cold.coldJobsPerSec,
          [`${metric}_all`]: r.jobsPerSec,
          ...cpuMetrics(metric, r.cpu),
        };
      }
      case "w5":
      case "w5b":
        return retained(ctx, system, drain, workload === "w5" ? s.retainedRows : s.retainedRowsLarge, {
          drain: workload === "w5" ? "drain_retained" : "drain_retained_10m",
          rows: workload === "w5" ? "retained" : "retained_10m",
          sweep: workload === "w5" ? "sweep" : "sweep_10m",
        });
      case "w6": {
        const r = await runDrain(ctx, { ...drain, n: scaled(s.queueJobs), queues: s.queueCount });
        return { drain_queues: r.jobsPerSec, drain_queues_startup_ms: r.startupMs };
      }
      case "w1-limited-conc":
      case "w1-limited-rate": {
        const { metric, limit } = LIMITS[workload];
        await ctx.producer.limitQueue(limit);
        const r = await runDrain(ctx, drain);
        return { [metric]: r.jobsPerSec, [`${metric}_startup_ms`]: r.startupMs };
      }
      default:
        throw new Error(`workload ${workload} has no measurement`);
    }
  });
}
