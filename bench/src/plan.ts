/**
 * Runs the plan: for each run, for each workload, every system in turn (A B C, A B C, ...), so slow drift
 * of the machine spreads over all systems instead of favouring whichever ran first.
 */
import { now } from "./clock.js";
import { InvalidRun, withMeasurement } from "./measure.js";
import type { BenchOptions, WorkloadId } from "./options.js";
import type { SystemAdapter } from "./systems/types.js";
import { runDrain, runLatency, runSingleEnqueue } from "./workloads.js";

/** Metric names, as they appear in the JSON. Rates are jobs/s, latencies ms. */
export type Metrics = Record<string, number>;

export interface Sample {
  system: string;
  workload: WorkloadId;
  run: number;
  valid: boolean;
  /** Why the run is invalid (failed check, error, timeout). */
  reason: string | null;
  metrics: Metrics;
  seconds: number;
}

/** A drain that takes longer is INVALID (timed out). The smoke run gives up sooner. */
const DRAIN_TIMEOUT_MS = 120_000;
const QUICK_DRAIN_TIMEOUT_MS = 30_000;

async function measure(system: SystemAdapter, workload: WorkloadId, opts: BenchOptions): Promise<Metrics> {
  const s = opts.sizes;
  const timeoutMs = opts.quick ? QUICK_DRAIN_TIMEOUT_MS : DRAIN_TIMEOUT_MS;
  const scaled = (n: number) => Math.max(1, Math.round(n * (system.drainScale ?? 1)));
  return withMeasurement(
    system,
    opts.databaseUrl,
    workload !== "w2-single",
    async (ctx): Promise<Metrics> => {
      switch (workload) {
        case "w1-c10":
        case "w1-c50": {
          const concurrency = workload === "w1-c10" ? 10 : 50;
          const r = await runDrain(ctx, {
            kind: "noop",
            n: scaled(s.drainJobs),
            concurrency,
            batchSize: s.bulkBatch,
            timeoutMs,
          });
          return {
            [`drain_c${concurrency}`]: r.jobsPerSec,
            [`drain_c${concurrency}_startup_ms`]: r.startupMs,
            bulk_enqueue: r.bulkEnqueuePerSec,
          };
        }
        case "w2-single":
          return { single_enqueue: (await runSingleEnqueue(ctx, s.singleEnqueues)).jobsPerSec };
        case "w3": {
          const r = await runLatency(ctx, {
            n: s.latencyJobs,
            intervalMs: s.latencyIntervalMs,
            concurrency: 10,
            idleMs: opts.quick ? 200 : 500,
            timeoutMs: 30_000,
          });
          return { latency_p50: r.p50, latency_p95: r.p95, latency_p99: r.p99, latency_max: r.max };
        }
        case "w4": {
          const r = await runDrain(ctx, {
            kind: "fail",
            n: scaled(s.failJobs),
            concurrency: 10,
            batchSize: s.bulkBatch,
            timeoutMs,
          });
          return { fail: r.jobsPerSec };
        }
      }
    },
  );
}

export async function runPlan(
  systems: readonly SystemAdapter[],
  opts: BenchOptions,
  log: (line: string) => void,
): Promise<Sample[]> {
  const samples: Sample[] = [];
  for (let run = 1; run <= opts.runs; run++) {
    for (const workload of opts.workloads) {
      for (const system of systems) {
        const started = now();
        let sample: Sample;
        try {
          const metrics = await measure(system, workload, opts);
          sample = { system: system.id, workload, run, valid: true, reason: null, metrics, seconds: 0 };
        } catch (err) {
          const reason =
            err instanceof InvalidRun ? err.message : `error: ${err instanceof Error ? err.message : err}`;
          sample = { system: system.id, workload, run, valid: false, reason, metrics: {}, seconds: 0 };
        }
        sample.seconds = (now() - started) / 1000;
        samples.push(sample);
        const shown = sample.valid
          ? Object.entries(sample.metrics)
              .map(([k, v]) => `${k}=${v.toFixed(k.includes("latency") || k.endsWith("_ms") ? 1 : 0)}`)
              .join(" ")
          : `INVALID: ${sample.reason}`;
        log(
          `run ${run}/${opts.runs} ${workload.padEnd(9)} ${system.id.padEnd(16)} ${sample.seconds.toFixed(1)}s  ${shown}`,
        );
      }
    }
  }
  return samples;
}
