/** Stats, queues and per-minute metrics for the overview and queues pages, read from `soniq.queues` and `soniq.metrics`. */
import type { MetricsPoint, QueueInfo, QueueStats, Soniq } from "@soniq/core";
import { badRequest } from "../errors.js";

export type StatKey = keyof QueueStats;

/** A `soniq.queues.list()` entry; `estimated` also names `total` when any count in it is an estimate. */
export interface QueueRow extends Omit<QueueInfo, "estimated"> {
  estimated: StatKey[];
}

/** The six counts and which of them are estimates. */
export interface StatsSummary {
  stats: QueueStats;
  estimated: StatKey[];
}

const COUNT_KEYS = ["queued", "processing", "done", "dead_letter", "cancelled"] as const;

function withTotal(estimated: readonly StatKey[]): StatKey[] {
  return estimated.length > 0 ? [...estimated, "total"] : [];
}

/** Every queue with its controls, stats and lag (core counts exactly up to 10,000 per queue). */
export async function listQueues(soniq: Soniq): Promise<QueueRow[]> {
  return (await soniq.queues.list()).map((q) => ({ ...q, estimated: withTotal(q.estimated) }));
}

/** The six counts summed over the queues (an estimate where any queue's count is one). */
export function totalsOf(queues: readonly QueueRow[]): StatsSummary {
  const stats: QueueStats = { total: 0, queued: 0, processing: 0, done: 0, dead_letter: 0, cancelled: 0 };
  const estimated = new Set<StatKey>();
  for (const q of queues) {
    for (const k of [...COUNT_KEYS, "total"] as const) stats[k] += q.stats[k];
    for (const k of q.estimated) estimated.add(k);
  }
  return { stats, estimated: [...estimated] };
}

/** The overview's counts: the per-queue counts summed (fast at any size; large done counts are estimates). */
export async function statsSummary(soniq: Soniq, queues?: readonly QueueRow[]): Promise<StatsSummary> {
  return totalsOf(queues ?? (await listQueues(soniq)));
}

export const RANGES = {
  "1h": { spanMs: 3_600_000, bucketMs: 60_000 },
  "24h": { spanMs: 86_400_000, bucketMs: 900_000 },
  "14d": { spanMs: 14 * 86_400_000, bucketMs: 6 * 3_600_000 },
} as const;
export type RangeName = keyof typeof RANGES;

export interface MetricBucket extends Omit<MetricsPoint, "bucketStart"> {
  /** The bucket's start (ISO 8601). */
  at: string;
}

export interface MetricsSeries {
  since: string;
  until: string;
  bucketMs: number;
  queue: string | null;
  /** Every bucket from `since` to `until`, oldest first; empty ones are zeros (for the charts). */
  buckets: MetricBucket[];
}

const MAX_BUCKETS = 2000;

function bucketAt(at: number, point?: MetricsPoint): MetricBucket {
  return {
    at: new Date(at).toISOString(),
    done: point?.done ?? 0,
    failed: point?.failed ?? 0,
    retried: point?.retried ?? 0,
    deadLettered: point?.deadLettered ?? 0,
    snoozed: point?.snoozed ?? 0,
    runMsSum: point?.runMsSum ?? 0,
  };
}

/**
 * Core's `soniq.metrics.series()` (the per-minute counters summed into `bucketMs` buckets, which core
 * validates), with the empty buckets between `since` and now filled in for the charts.
 */
export async function metricsSeries(
  soniq: Soniq,
  request: { since: Date; bucketMs: number; queue?: string | undefined; now?: number },
): Promise<MetricsSeries> {
  const now = request.now ?? Date.now();
  const { bucketMs } = request;
  const start = Math.floor(request.since.getTime() / bucketMs) * bucketMs;
  const count = Math.ceil((now - start) / bucketMs);
  if (count > MAX_BUCKETS) throw badRequest(`since/bucketMs would make more than ${MAX_BUCKETS} buckets`);
  if (count < 1) throw badRequest("since must be in the past");
  const points = await soniq.metrics.series({
    since: new Date(start),
    bucketMs,
    ...(request.queue ? { queue: request.queue } : {}),
  });
  const byStart = new Map(points.map((p) => [p.bucketStart.getTime(), p]));
  return {
    since: new Date(start).toISOString(),
    until: new Date(now).toISOString(),
    bucketMs,
    queue: request.queue ?? null,
    buckets: Array.from({ length: count }, (_, i) => {
      const at = start + i * bucketMs;
      return bucketAt(at, byStart.get(at));
    }),
  };
}
