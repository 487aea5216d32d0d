/** The metrics facet: `soniq_metrics` per-minute counters, a batch added in one statement. */
import type { MetricsFacet, MetricsListQuery, MetricsRow } from "@soniq/core/backend";
import { type PgContext, query, readQuery } from "./internal/context.js";
import { toDate } from "./internal/rows.js";

export function metricsFacet(ctx: PgContext): MetricsFacet {
  return {
    record: async (rows) => {
      if (rows.length > 0) await query(ctx, "metrics.record", { text: ADD, values: [payload(rows)] });
    },
    list: (q) => list(ctx, q),
    prune: async (olderThanMs) =>
      (await query(ctx, "metrics.prune", { text: PRUNE, values: [olderThanMs] })).rowCount ?? 0,
  };
}

const ADD = `INSERT INTO soniq_metrics AS m (bucket_start, queue, job_name, done, failed, retried, dead_lettered,
    snoozed, run_ms_sum)
  SELECT x.bucket_start, x.queue, x.job_name, x.done, x.failed, x.retried, x.dead_lettered, x.snoozed, x.run_ms_sum
  FROM jsonb_to_recordset($1::jsonb) AS x(bucket_start timestamptz, queue text, job_name text, done int,
    failed int, retried int, dead_lettered int, snoozed int, run_ms_sum float8)
  ON CONFLICT (bucket_start, queue, job_name) DO UPDATE SET done = m.done + EXCLUDED.done,
    failed = m.failed + EXCLUDED.failed, retried = m.retried + EXCLUDED.retried,
    dead_lettered = m.dead_lettered + EXCLUDED.dead_lettered, snoozed = m.snoozed + EXCLUDED.snoozed,
    run_ms_sum = m.run_ms_sum + EXCLUDED.run_ms_sum`;
const LIST = `SELECT bucket_start, queue, job_name, done, failed, retried, dead_lettered, snoozed, run_ms_sum
  FROM soniq_metrics WHERE bucket_start >= $1 AND ($2::text IS NULL OR queue = $2) ORDER BY bucket_start`;
const PRUNE =
  "DELETE FROM soniq_metrics WHERE bucket_start < now() - make_interval(secs => $1::float8 / 1000)";

function payload(rows: readonly MetricsRow[]): string {
  return JSON.stringify(
    rows.map((r) => ({
      bucket_start: r.bucketStart.toISOString(),
      queue: r.queue,
      job_name: r.jobName,
      done: r.done,
      failed: r.failed,
      retried: r.retried,
      dead_lettered: r.deadLettered,
      snoozed: r.snoozed,
      run_ms_sum: r.runMsSum,
    })),
  );
}

async function list(ctx: PgContext, q: MetricsListQuery): Promise<MetricsRow[]> {
  const res = await readQuery(ctx, "metrics.list", { text: LIST, values: [q.since, q.queue] });
  return res.rows.map((r) => ({
    bucketStart: toDate(r.bucket_start),
    queue: String(r.queue),
    jobName: String(r.job_name),
    done: Number(r.done),
    failed: Number(r.failed),
    retried: Number(r.retried),
    deadLettered: Number(r.dead_lettered),
    snoozed: Number(r.snoozed),
    runMsSum: Number(r.run_ms_sum),
  }));
}
