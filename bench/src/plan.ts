/**
 * Runs the plan: for each run, for each workload, every system in turn (A B C, A B C, ...), so slow drift
 * of the machine spreads over all systems instead of favouring whichever ran first.
 */
import { now } from "./clock.js";
import { formatMetric } from "./columns.js";
import { InvalidRun } from "./measure.js";
import { applies, type Metrics, measure } from "./measurements.js";
import type { BenchOptions, WorkloadId } from "./options.js";
import type { SystemAdapter } from "./systems/types.js";

export type { Metrics } from "./measurements.js";

export interface Sample {
  system: string;
  workload: WorkloadId;
  run: number;
  valid: boolean;
  /** Why the run is invalid (failed check, error, timeout, incident). */
  reason: string | null;
  metrics: Metrics;
  seconds: number;
}

/**
 * Why a measurement cannot be right, or null: every metric is a rate, a duration, a CPU time, a byte count or a
 * ratio of those, so a negative or non-finite one means the measurement itself broke (a clock that went backwards
 * between two readings); it is reported INVALID, not averaged into a median.
 */
export function implausibleMetric(metrics: Metrics): string | null {
  for (const [key, value] of Object.entries(metrics)) {
    if (!Number.isFinite(value) || value < 0)
      return `${key} = ${value}: no metric can be negative or non-finite`;
  }
  return null;
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
        if (!applies(system, workload)) {
          if (run === 1) log(`skip ${workload} on ${system.id}: it does not apply`);
          continue;
        }
        const started = now();
        let sample: Sample;
        try {
          const metrics = await measure(system, workload, opts);
          const implausible = implausibleMetric(metrics);
          if (implausible) throw new InvalidRun(implausible);
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
              .map(([k, v]) => `${k}=${formatMetric(k, v)}`)
              .join(" ")
          : `INVALID: ${sample.reason}`;
        log(
          `run ${run}/${opts.runs} ${workload.padEnd(15)} ${system.id.padEnd(16)} ${sample.seconds.toFixed(1)}s  ${shown}`,
        );
      }
    }
  }
  return samples;
}
