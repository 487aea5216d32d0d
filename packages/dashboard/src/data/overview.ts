/** Stats, queues and per-minute metrics for the overview and queues pages. */
import type { QueueStats, Soniq, WorkerInfo } from "@soniq/core";
import { badRequest, notAvailable } from "../errors.js";
import type { Features, QueueInfo } from "../features.js";

export interface QueueRow {
  name: string;
  /** null when core has no queue controls (nothing can be paused). */
  paused: boolean | null;
  concurrency: number | null;
  groupConcurrency: number | null;
  rateLimit: { max: number; perMs: number } | null;
  stats: QueueStats | null;
  /** Keys of `stats` that are estimates (core counts exactly up to 10,000 per queue); empty when exact. */
  estimated: StatKey[];
  lagMs: number | null;
}

export type StatKey = keyof QueueStats;

/** The six counts and which of them are estimates. */
export interface StatsSummary {
  stats: QueueStats;
  estimated: StatKey[];
}

const COUNT_KEYS = ["queued", "processing", "done", "dead_letter", "cancelled"] as const;

function estimatedKeys(value: unknown): StatKey[] {
  if (!Array.isArray(value)) return [];
  const keys = COUNT_KEYS.filter((k) => value.includes(k));
  return keys.length > 0 ? [...keys, "total"] : [];
}

/** The six counts summed over the queues (an estimate where any queue's count is one). */
export function totalsOf(queues: readonly QueueRow[]): StatsSummary {
  const stats: QueueStats = { total: 0, queued: 0, processing: 0, done: 0, dead_letter: 0, cancelled: 0 };
  const estimated = new Set<StatKey>();
  for (const q of queues) {
    if (!q.stats) continue;
    for (const k of [...COUNT_KEYS, "total"] as const) stats[k] += q.stats[k];
    for (const k of q.estimated) estimated.add(k);
  }
  return { stats, estimated: [...estimated] };
}

/**
 * The overview's counts. With `soniq.queues` they are its per-queue counts summed: fast at any size, with
 * done, cancelled and dead letters beyond 10,000 in a queue estimated. Without it, `getQueueStats()`
 * counts every row exactly.
 */
export async function statsSummary(
  soniq: Soniq,
  features: Features,
  queues?: QueuesResult,
): Promise<StatsSummary> {
  if (queues?.controls) return totalsOf(queues.queues);
  if (features.queues) return totalsOf((await listQueues(soniq, features, async () => [])).queues);
  return { stats: await soniq.getQueueStats(), estimated: [] };
}

export interface QueuesResult {
  queues: QueueRow[];
  /** True when `soniq.queues` exists (pause, resume, configure, lag). */
  controls: boolean;
  /** How the list was made: "soniq.queues.list()" or derived from recent jobs, dead letters and workers. */
  source: string;
}

export const DERIVED_QUEUE_SCAN = 1000;
/** Newest jobs of any status read for queue names: few, since core sorts every row to find them. */
const RECENT_QUEUE_SCAN = 100;
const MAX_DERIVED_QUEUES = 50;

function num(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

function normaliseQueue(q: QueueInfo): QueueRow {
  const rate = q.rateLimit as { max?: unknown; perMs?: unknown } | null | undefined;
  return {
    name: String(q.name),
    paused: q.paused === true,
    concurrency: num(q.concurrency),
    groupConcurrency: num(q.groupConcurrency),
    rateLimit:
      rate && num(rate.max) !== null && num(rate.perMs) !== null
        ? { max: rate.max as number, perMs: rate.perMs as number }
        : null,
    stats: (q.stats as unknown as QueueStats | undefined) ?? null,
    estimated: estimatedKeys(q.estimated),
    lagMs: num(q.lagMs),
  };
}

export async function listQueues(
  soniq: Soniq,
  features: Features,
  workers: () => Promise<WorkerInfo[]>,
): Promise<QueuesResult> {
  if (features.queues) {
    const list = await features.queues.list();
    const rows = Array.isArray(list) ? (list as QueueInfo[]).map(normaliseQueue) : [];
    return { queues: rows, controls: true, source: "soniq.queues.list()" };
  }
  const [recent, waiting, dead, ws] = await Promise.all([
    soniq.listJobs({ limit: RECENT_QUEUE_SCAN }),
    soniq.listJobs({ status: ["queued", "processing"], limit: DERIVED_QUEUE_SCAN }),
    soniq.deadLetter.list({ limit: DERIVED_QUEUE_SCAN }),
    workers().catch(() => [] as WorkerInfo[]),
  ]);
  const names = new Set<string>();
  for (const j of recent) names.add(j.queue);
  for (const j of waiting) names.add(j.queue);
  for (const d of dead) names.add(d.queue);
  for (const w of ws) if (w.status !== "stopped") for (const q of w.queues) names.add(q);
  const sorted = [...names].sort().slice(0, MAX_DERIVED_QUEUES);
  const stats = await Promise.all(sorted.map((queue) => soniq.getQueueStats({ queue })));
  return {
    queues: sorted.map((name, i) => ({
      name,
      paused: null,
      concurrency: null,
      groupConcurrency: null,
      rateLimit: null,
      stats: stats[i] ?? null,
      estimated: [],
      lagMs: null,
    })),
    controls: false,
    source: `derived from the ${RECENT_QUEUE_SCAN} newest jobs, ${DERIVED_QUEUE_SCAN} waiting jobs, ${DERIVED_QUEUE_SCAN} newest dead letters and the live workers`,
  };
}

export const RANGES = {
  "1h": { spanMs: 3_600_000, bucketMs: 60_000 },
  "24h": { spanMs: 86_400_000, bucketMs: 900_000 },
  "14d": { spanMs: 14 * 86_400_000, bucketMs: 6 * 3_600_000 },
} as const;
export type RangeName = keyof typeof RANGES;

export interface MetricBucket {
  at: string;
  done: number;
  failed: number;
  retried: number;
  deadLettered: number;
  snoozed: number;
  runMsSum: number;
}

export interface MetricsSeries {
  since: string;
  until: string;
  bucketMs: number;
  queue: string | null;
  buckets: MetricBucket[];
}

const MAX_BUCKETS = 2000;

function field(row: Record<string, unknown>, camel: string, snake: string): number {
  const v = row[camel] ?? row[snake];
  return typeof v === "number" && Number.isFinite(v) ? v : typeof v === "string" ? Number(v) || 0 : 0;
}

function bucketStartOf(row: Record<string, unknown>): number {
  const v = row.bucketStart ?? row.bucket_start ?? row.at;
  const t =
    v instanceof Date
      ? v.getTime()
      : typeof v === "string" || typeof v === "number"
        ? new Date(v).getTime()
        : NaN;
  return t;
}

/** Per-minute rows from `soniq.metrics`, summed into `bucketMs` buckets from `since` to now. */
export async function metricsSeries(
  features: Features,
  request: { since: Date; bucketMs: number; queue?: string | undefined; now?: number },
): Promise<MetricsSeries> {
  const now = request.now ?? Date.now();
  const { bucketMs } = request;
  const start = Math.floor(request.since.getTime() / bucketMs) * bucketMs;
  const count = Math.ceil((now - start) / bucketMs);
  if (count > MAX_BUCKETS) throw badRequest(`since/bucketMs would make more than ${MAX_BUCKETS} buckets`);
  if (count < 1) throw badRequest("since must be in the past");
  if (!features.metrics) throw notAvailable("Per-minute metrics (soniq.metrics)");
  const rows = await features.metrics.query({
    since: new Date(start),
    until: new Date(now),
    bucketMs,
    ...(request.queue ? { queue: request.queue } : {}),
  });
  const buckets: MetricBucket[] = Array.from({ length: count }, (_, i) => ({
    at: new Date(start + i * bucketMs).toISOString(),
    done: 0,
    failed: 0,
    retried: 0,
    deadLettered: 0,
    snoozed: 0,
    runMsSum: 0,
  }));
  for (const r of Array.isArray(rows) ? rows : []) {
    if (typeof r !== "object" || r === null) continue;
    const row = r as Record<string, unknown>;
    if (request.queue && typeof row.queue === "string" && row.queue !== request.queue) continue;
    const b = buckets[Math.floor((bucketStartOf(row) - start) / bucketMs)];
    if (!b) continue;
    b.done += field(row, "done", "done");
    b.failed += field(row, "failed", "failed");
    b.retried += field(row, "retried", "retried");
    b.deadLettered += field(row, "deadLettered", "dead_lettered");
    b.snoozed += field(row, "snoozed", "snoozed");
    b.runMsSum += field(row, "runMsSum", "run_ms_sum");
  }
  return {
    since: new Date(start).toISOString(),
    until: new Date(now).toISOString(),
    bucketMs,
    queue: request.queue ?? null,
    buckets,
  };
}
