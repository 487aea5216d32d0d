/** The metrics facet: `soniq_metrics` per-minute counters, added to in one IMMEDIATE transaction. */
import type { MetricsFacet, MetricsListQuery, MetricsRow } from "@soniq/core/backend";
import { immediate, runSync, type SqliteContext } from "./internal/context.js";
import { NOW } from "./internal/sql.js";

export function metricsFacet(ctx: SqliteContext): MetricsFacet {
  return {
    record: (rows) =>
      runSync("metrics.record", () =>
        immediate(ctx, () => {
          for (const r of rows) ctx.statement(ADD).run({ ...r, bucketStart: r.bucketStart.getTime() });
        }),
      ),
    list: (q) => runSync("metrics.list", () => list(ctx, q)),
    prune: (olderThanMs) => runSync("metrics.prune", () => ctx.statement(PRUNE).run(olderThanMs).changes),
  };
}

const ADD = `INSERT INTO soniq_metrics (bucket_start, queue, job_name, done, failed, retried, dead_lettered, snoozed,
    run_ms_sum) VALUES (@bucketStart, @queue, @jobName, @done, @failed, @retried, @deadLettered, @snoozed, @runMsSum)
  ON CONFLICT (bucket_start, queue, job_name) DO UPDATE SET done = done + excluded.done,
    failed = failed + excluded.failed, retried = retried + excluded.retried,
    dead_lettered = dead_lettered + excluded.dead_lettered, snoozed = snoozed + excluded.snoozed,
    run_ms_sum = run_ms_sum + excluded.run_ms_sum`;
const LIST = `SELECT bucket_start AS bucketStart, queue, job_name AS jobName, done, failed, retried,
    dead_lettered AS deadLettered, snoozed, run_ms_sum AS runMsSum
  FROM soniq_metrics WHERE bucket_start >= @since AND (@queue IS NULL OR queue = @queue) ORDER BY bucket_start`;
const PRUNE = `DELETE FROM soniq_metrics WHERE bucket_start < ${NOW} - ?`;

function list(ctx: SqliteContext, q: MetricsListQuery): MetricsRow[] {
  const rows = ctx.statement(LIST).all({ since: q.since.getTime(), queue: q.queue }) as (Omit<
    MetricsRow,
    "bucketStart"
  > & { bucketStart: number })[];
  return rows.map((r) => ({ ...r, bucketStart: new Date(r.bucketStart) }));
}
