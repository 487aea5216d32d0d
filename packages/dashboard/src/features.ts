/**
 * Runtime feature detection over the Soniq instance. Queue controls, explain, audit, metrics and
 * schedules (DESIGN.md sections 8 and 9) are not in every core version; each is looked up by its
 * documented name on every request, so pages light up as soon as core has them. The shapes below are
 * the documented ones; values are normalised defensively where they are read.
 */
import type { Soniq, WorkerInfo } from "@soniq/core";

type AsyncFn = (...args: never[]) => Promise<unknown>;

export interface QueueInfo {
  name: string;
  paused: boolean;
  concurrency: number | null;
  groupConcurrency: number | null;
  rateLimit: { max: number; perMs: number } | null;
  stats?: Record<string, number>;
  /** The counts of `stats` core estimated (large tables); absent in cores before estimates. */
  estimated?: unknown;
  lagMs: number | null;
}

export interface ExplainReason {
  code: string;
  message: string;
  evidence?: unknown;
}

export interface Explain {
  status: string | null;
  verdict: string;
  reasons: ExplainReason[];
}

export interface AuditEntry {
  id: string | number;
  at: Date | string;
  actor: string;
  action: string;
  target: string | null;
  params: unknown;
  outcome: string;
  details: unknown;
}

export interface ScheduleInfo {
  name: string;
  jobName: string;
  cron: string | null;
  every: number | string | null;
  timezone: string | null;
  args: unknown;
  queue: string | null;
  priority: number | null;
  catchUp: unknown;
  paused: boolean;
  nextRunAt: Date | string | null;
  lastRunAt: Date | string | null;
  lastJobId: string | null;
  createdAt: Date | string | null;
}

export interface ScheduleTick {
  tickAt: Date | string;
  outcome: string;
  jobId: string | null;
  reason: string | null;
  recordedAt: Date | string;
}

export interface Features {
  queues: {
    list(): Promise<unknown>;
    pause: AsyncFn | null;
    resume: AsyncFn | null;
    configure: AsyncFn | null;
  } | null;
  explain: ((id: string) => Promise<unknown>) | null;
  audit: { list(filter: Record<string, unknown>): Promise<unknown> } | null;
  metrics: { query(filter: Record<string, unknown>): Promise<unknown> } | null;
  schedules: {
    list(): Promise<unknown>;
    get: ((name: string) => Promise<unknown>) | null;
    upcoming: ((name: string, n: number) => Promise<unknown>) | null;
    history: ((name: string, filter: Record<string, unknown>) => Promise<unknown>) | null;
    pause: AsyncFn | null;
    resume: AsyncFn | null;
    trigger: AsyncFn | null;
  } | null;
  /** Where worker rows come from (core has no public `listWorkers` on `Soniq` yet). */
  workers: { list(): Promise<WorkerInfo[]>; source: string } | null;
  deadLetterWhere: { replayWhere: AsyncFn | null; purgeWhere: AsyncFn | null };
  /** Core accepts `{ actor }` on writes (it ships with the audit log). */
  actor: boolean;
}

function objectAt(owner: unknown, key: string): Record<string, unknown> | null {
  if (typeof owner !== "object" || owner === null) return null;
  const value = (owner as Record<string, unknown>)[key];
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : null;
}

function fn<T extends AsyncFn>(owner: Record<string, unknown> | null, key: string): T | null {
  const value = owner?.[key];
  return typeof value === "function" ? (value.bind(owner) as T) : null;
}

function detectWorkers(soniq: Soniq): Features["workers"] {
  const app = soniq as unknown as Record<string, unknown>;
  const candidates: [Record<string, unknown> | null, string, string][] = [
    [app, "listWorkers", "soniq.listWorkers()"],
    [objectAt(app, "workers"), "list", "soniq.workers.list()"],
    [objectAt(objectAt(app, "backend"), "workers"), "list", "soniq.backend.workers.list()"],
    [objectAt(app, "backend"), "listWorkers", "soniq.backend.listWorkers()"],
  ];
  for (const [owner, key, source] of candidates) {
    const list = fn<() => Promise<WorkerInfo[]>>(owner, key);
    if (list) return { list, source };
  }
  return null;
}

/**
 * Core's `metrics.series({ since, bucketMs, queue })` (buckets with activity, `bucketStart` and the six
 * counters) behind the `query` shape: it takes no `until` (it reads up to now).
 */
function seriesQuery(
  series: ((f: Record<string, unknown>) => Promise<unknown>) | null,
): ((f: Record<string, unknown>) => Promise<unknown>) | null {
  if (!series) return null;
  return ({ since, bucketMs, queue }) =>
    series({ since, bucketMs, ...(typeof queue === "string" ? { queue } : {}) });
}

export function detectFeatures(soniq: Soniq): Features {
  const app = soniq as unknown as Record<string, unknown>;
  const queues = objectAt(app, "queues");
  const queueList = fn<() => Promise<unknown>>(queues, "list");
  const audit = objectAt(app, "audit");
  const auditList = fn<(f: Record<string, unknown>) => Promise<unknown>>(audit, "list");
  const metrics = objectAt(app, "metrics");
  const metricsQuery =
    fn<(f: Record<string, unknown>) => Promise<unknown>>(metrics, "query") ??
    fn<(f: Record<string, unknown>) => Promise<unknown>>(metrics, "list") ??
    seriesQuery(fn<(f: Record<string, unknown>) => Promise<unknown>>(metrics, "series"));
  const schedules = objectAt(app, "schedules");
  const scheduleList = fn<() => Promise<unknown>>(schedules, "list");
  const deadLetter = objectAt(app, "deadLetter");
  return {
    queues: queueList
      ? {
          list: queueList,
          pause: fn(queues, "pause"),
          resume: fn(queues, "resume"),
          configure: fn(queues, "configure"),
        }
      : null,
    explain: fn<(id: string) => Promise<unknown>>(app, "explain"),
    audit: auditList ? { list: auditList } : null,
    metrics: metricsQuery ? { query: metricsQuery } : null,
    schedules: scheduleList
      ? {
          list: scheduleList,
          get: fn(schedules, "get"),
          upcoming: fn(schedules, "upcoming"),
          history: fn(schedules, "history"),
          pause: fn(schedules, "pause"),
          resume: fn(schedules, "resume"),
          trigger: fn(schedules, "trigger"),
        }
      : null,
    workers: detectWorkers(soniq),
    deadLetterWhere: { replayWhere: fn(deadLetter, "replayWhere"), purgeWhere: fn(deadLetter, "purgeWhere") },
    actor: auditList !== null,
  };
}

/** The `{ actor }` options argument when core supports it, else nothing (older cores reject unknown keys). */
export function actorOptions(features: Features, label: string | null): { actor: string } | undefined {
  return features.actor ? { actor: `dashboard:${label ?? "anonymous"}` } : undefined;
}
