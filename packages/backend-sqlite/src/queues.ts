/**
 * The queues facet: queue controls in `soniq_queues` and the operator view of every queue. Each action
 * and its audit row commit in one IMMEDIATE transaction. The claim (runs.ts, internal/queue-limits.ts)
 * enforces the settings.
 */
import {
  type AuditRecord,
  type JobStatus,
  type QueueConfigPatch,
  type QueueInfo,
  type QueueSettings,
  type QueueStats,
  type QueuesFacet,
  queueInfo,
} from "@soniq/core/backend";
import { writeAudit } from "./internal/audit-rows.js";
import { immediate, runSync, type SqliteContext } from "./internal/context.js";
import { QUEUE_COLUMNS, type QueueRecord, toQueueSettings } from "./internal/queue-rows.js";
import { NOW } from "./internal/sql.js";

export function queuesFacet(ctx: SqliteContext): QueuesFacet {
  return {
    pause: (name, audit) =>
      runSync("queues.pause", () => write(ctx, name, audit, () => ctx.statement(PAUSE).run(name))),
    resume: (name, audit) =>
      runSync("queues.resume", () => {
        const row = write(ctx, name, audit, () => ctx.statement(RESUME).run(name));
        ctx.notify(name);
        return row;
      }),
    configure: (name, patch, audit) =>
      runSync("queues.configure", () => {
        const row = configure(ctx, name, patch, audit);
        ctx.notify(name);
        return row;
      }),
    get: (name) => runSync("queues.get", () => read(ctx, name)),
    list: () => runSync("queues.list", () => list(ctx)),
    recentStarts: (name, perMs) =>
      runSync("queues.recentStarts", () => {
        const row = ctx.statement(RECENT_STARTS).get(name, perMs) as { n: number; oldest: number | null };
        return { count: row.n, oldestAt: row.oldest === null ? null : new Date(row.oldest) };
      }),
  };
}

const GET = `SELECT ${QUEUE_COLUMNS} FROM soniq_queues WHERE name = ?`;
const ENSURE = `INSERT INTO soniq_queues (name, updated_at) VALUES (?, ${NOW}) ON CONFLICT (name) DO NOTHING`;
const PAUSE = `UPDATE soniq_queues SET paused = 1, paused_at = COALESCE(paused_at, ${NOW}), updated_at = ${NOW}
  WHERE name = ?`;
const RESUME = `UPDATE soniq_queues SET paused = 0, paused_at = NULL, updated_at = ${NOW} WHERE name = ?`;
const CONFIGURE = `UPDATE soniq_queues SET
    concurrency = CASE WHEN @setConcurrency THEN @concurrency ELSE concurrency END,
    group_concurrency = CASE WHEN @setGroup THEN @groupConcurrency ELSE group_concurrency END,
    rate_max = CASE WHEN @setRate THEN @rateMax ELSE rate_max END,
    rate_per_ms = CASE WHEN @setRate THEN @ratePerMs ELSE rate_per_ms END,
    lag_alert_ms = CASE WHEN @setLag THEN @lagAlertMs ELSE lag_alert_ms END,
    updated_at = ${NOW}
  WHERE name = @name`;
const DROP_STARTS = "DELETE FROM soniq_queue_starts WHERE queue = ?";

// Counted from the fetch (queued), processing and finished indexes and the dead letters' queue index alone.
// SQLite counts an index range in process fast enough that every count is exact (a million finished rows in
// about 150 ms on the loaded 2-core machine, README), so none is estimated.
const JOB_COUNTS = `SELECT queue, 'queued' AS status, count(*) AS n FROM soniq_jobs WHERE status = 'queued' GROUP BY queue
  UNION ALL SELECT queue, 'processing', count(*) FROM soniq_jobs WHERE status = 'processing' GROUP BY queue
  UNION ALL SELECT queue, status, count(*) FROM soniq_jobs WHERE status IN ('done', 'cancelled') GROUP BY queue, status`;
const DEAD_LETTER_COUNTS = "SELECT queue, count(*) AS n FROM soniq_dead_letter_jobs GROUP BY queue";
const LAG = `SELECT queue, ${NOW} - MIN(scheduled_at) AS lag FROM soniq_jobs
  WHERE status = 'queued' AND scheduled_at <= ${NOW} GROUP BY queue`;
const RECENT_STARTS = `SELECT count(*) AS n, MIN(started_at) AS oldest FROM soniq_queue_starts
  WHERE queue = ? AND started_at > ${NOW} - ?`;
const ALL = `SELECT ${QUEUE_COLUMNS} FROM soniq_queues`;

function read(ctx: SqliteContext, name: string): QueueSettings {
  return toQueueSettings(name, ctx.statement(GET).get(name) as QueueRecord | undefined);
}

function write(ctx: SqliteContext, name: string, audit: AuditRecord, change: () => void): QueueSettings {
  return immediate(ctx, () => {
    ctx.statement(ENSURE).run(name);
    change();
    writeAudit(ctx, audit);
    return read(ctx, name);
  });
}

function configure(ctx: SqliteContext, name: string, patch: QueueConfigPatch, audit: AuditRecord) {
  const rate = patch.rateLimit;
  return write(ctx, name, audit, () => {
    ctx.statement(CONFIGURE).run({
      name,
      setConcurrency: patch.concurrency === undefined ? 0 : 1,
      concurrency: patch.concurrency ?? null,
      setGroup: patch.groupConcurrency === undefined ? 0 : 1,
      groupConcurrency: patch.groupConcurrency ?? null,
      setRate: rate === undefined ? 0 : 1,
      rateMax: rate?.max ?? null,
      ratePerMs: rate?.perMs ?? null,
      setLag: patch.lagAlertMs === undefined ? 0 : 1,
      lagAlertMs: patch.lagAlertMs ?? null,
    });
    if (rate === null) ctx.statement(DROP_STARTS).run(name);
  });
}

function list(ctx: SqliteContext): QueueInfo[] {
  // One read transaction: settings, counts and lag from one snapshot.
  return ctx.db.transaction(() => {
    const settings = new Map((ctx.statement(ALL).all() as QueueRecord[]).map((r) => [r.name, r]));
    const lag = new Map(
      (ctx.statement(LAG).all() as { queue: string; lag: number }[]).map((r) => [r.queue, r.lag]),
    );
    const stats = new Map<string, QueueStats>();
    const of = (queue: string) => {
      let s = stats.get(queue);
      if (s === undefined) {
        s = { total: 0, queued: 0, processing: 0, done: 0, dead_letter: 0, cancelled: 0 };
        stats.set(queue, s);
      }
      return s;
    };
    for (const r of ctx.statement(JOB_COUNTS).all() as { queue: string; status: JobStatus; n: number }[]) {
      of(r.queue)[r.status] += r.n;
    }
    for (const r of ctx.statement(DEAD_LETTER_COUNTS).all() as { queue: string; n: number }[]) {
      of(r.queue).dead_letter += r.n;
    }
    for (const name of settings.keys()) of(name);
    return [...stats.keys()].sort().map((name): QueueInfo => {
      const s = stats.get(name) as QueueStats;
      s.total = s.queued + s.processing + s.done + s.cancelled + s.dead_letter;
      return queueInfo(toQueueSettings(name, settings.get(name)), s, lag.get(name) ?? null);
    });
  })();
}
