/** `soniq.metrics.series({ since, bucketMs, queue })`: the persisted per-minute counters, re-bucketed. */
import type { GuardedBackend, MetricsRow } from "../contract/index.js";
import { filterObject, invalid, optionalDate, optionalString } from "../jobs/queries.js";

/** How long maintenance keeps `soniq_metrics` rows. */
export const METRICS_RETENTION_MS = 14 * 24 * 60 * 60 * 1000;

export interface MetricsSeriesFilter {
  /** Default: one hour ago. */
  since?: Date;
  /** Bucket width, a whole number of minutes. Default 60_000. */
  bucketMs?: number;
  queue?: string;
}

/** One bucket of `series()`: the counters summed over its minutes (and queues, job names). */
export type MetricsPoint = Omit<MetricsRow, "queue" | "jobName">;

/** Adds `from`'s counters into `into`. */
export function addMetricCounts(into: MetricsPoint, from: MetricsPoint): void {
  into.done += from.done;
  into.failed += from.failed;
  into.retried += from.retried;
  into.deadLettered += from.deadLettered;
  into.snoozed += from.snoozed;
  into.runMsSum += from.runMsSum;
}

export class MetricsService {
  constructor(private readonly backend: GuardedBackend<unknown>) {}

  /** Buckets with activity, oldest first. */
  async series(filter?: MetricsSeriesFilter): Promise<MetricsPoint[]> {
    const what = "metrics.series(filter)";
    const f = filterObject(filter, what, ["since", "bucketMs", "queue"]);
    const since = optionalDate(f.since, `${what}.since`) ?? new Date(Date.now() - 3_600_000);
    const bucketMs = f.bucketMs ?? 60_000;
    if (
      typeof bucketMs !== "number" ||
      !Number.isSafeInteger(bucketMs) ||
      bucketMs < 60_000 ||
      bucketMs % 60_000 !== 0
    ) {
      throw invalid(`${what}.bucketMs`, "expected a whole number of minutes in ms (>= 60000)", bucketMs);
    }
    const rows = await this.backend.metrics.list({ since, queue: optionalString(f.queue, `${what}.queue`) });
    const points = new Map<number, MetricsPoint>();
    for (const r of rows) {
      const start = Math.floor(r.bucketStart.getTime() / bucketMs) * bucketMs;
      let p = points.get(start);
      if (p === undefined) {
        p = {
          bucketStart: new Date(start),
          done: 0,
          failed: 0,
          retried: 0,
          deadLettered: 0,
          snoozed: 0,
          runMsSum: 0,
        };
        points.set(start, p);
      }
      addMetricCounts(p, r);
    }
    return [...points.values()].sort((a, b) => a.bucketStart.getTime() - b.bucketStart.getTime());
  }
}
