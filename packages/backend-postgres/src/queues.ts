/**
 * The queues facet: queue controls in `soniq_queues` and the operator view of every queue. Each action
 * and its audit row commit in one transaction; resume and configure NOTIFY the queue so idle workers
 * claim at once. The claim (runs.ts, internal/queue-limits.ts) enforces the settings.
 */
import {
  type AuditRecord,
  ESTIMABLE_COUNTS,
  type EstimableCount,
  type QueueConfigPatch,
  type QueueInfo,
  type QueueListQuery,
  type QueueSettings,
  type QueuesFacet,
  queueInfo,
} from "@soniq/core/backend";
import type pg from "pg";
import { writeAudit } from "./internal/audit-rows.js";
import { type PgContext, query } from "./internal/context.js";
import { NEW_JOB_CHANNEL } from "./internal/listen-client.js";
import { distinctQueues } from "./internal/queue-names.js";
import { QUEUE_COLUMNS, toQueueSettings } from "./internal/queue-rows.js";
import { type Row, toDate } from "./internal/rows.js";
import { inTransaction } from "./internal/tx.js";

export function queuesFacet(ctx: PgContext): QueuesFacet {
  return {
    pause: (name, audit) =>
      write(ctx, "queues.pause", name, audit, async (c) => (await c.query(PAUSE, [name])).rows[0], false),
    resume: (name, audit) =>
      write(ctx, "queues.resume", name, audit, async (c) => (await c.query(RESUME, [name])).rows[0], true),
    configure: (name, patch, audit) => configure(ctx, name, patch, audit),
    get: async (name) => {
      const res = await query(ctx, "queues.get", { text: GET, values: [name] });
      return toQueueSettings(name, res.rows[0]);
    },
    list: (q) => list(ctx, q),
    recentStarts: async (name, perMs) => {
      const res = await query(ctx, "queues.recentStarts", { text: RECENT_STARTS, values: [name, perMs] });
      const row = res.rows[0];
      return { count: Number(row?.n ?? 0), oldestAt: row?.oldest == null ? null : toDate(row.oldest) };
    },
  };
}

const UPSERT = "INSERT INTO soniq_queues (name) VALUES ($1) ON CONFLICT (name) DO NOTHING";

const PAUSE = `UPDATE soniq_queues SET paused = true, paused_at = COALESCE(paused_at, now()), updated_at = now()
  WHERE name = $1 RETURNING ${QUEUE_COLUMNS}`;
const RESUME = `UPDATE soniq_queues SET paused = false, paused_at = NULL, updated_at = now()
  WHERE name = $1 RETURNING ${QUEUE_COLUMNS}`;
const CONFIGURE = `UPDATE soniq_queues SET
    concurrency = CASE WHEN $2 THEN $3::int ELSE concurrency END,
    group_concurrency = CASE WHEN $4 THEN $5::int ELSE group_concurrency END,
    rate_max = CASE WHEN $6 THEN $7::int ELSE rate_max END,
    rate_per_ms = CASE WHEN $6 THEN $8::int ELSE rate_per_ms END,
    lag_alert_ms = CASE WHEN $9 THEN $10::int ELSE lag_alert_ms END,
    updated_at = now()
  WHERE name = $1 RETURNING ${QUEUE_COLUMNS}`;
const DROP_STARTS = "DELETE FROM soniq_queue_starts WHERE queue = $1";
const RECENT_STARTS = `SELECT count(*)::int AS n, min(started_at) AS oldest FROM soniq_queue_starts
  WHERE queue = $1 AND started_at > now() - make_interval(secs => $2::float8 / 1000)`;
const GET = `SELECT ${QUEUE_COLUMNS} FROM soniq_queues WHERE name = $1`;

async function write(
  ctx: PgContext,
  operation: string,
  name: string,
  audit: AuditRecord,
  change: (client: pg.PoolClient) => Promise<Row | undefined>,
  notify: boolean,
): Promise<QueueSettings> {
  return inTransaction(ctx, operation, async (client) => {
    await client.query(UPSERT, [name]);
    const row = await change(client);
    await writeAudit(client, audit);
    if (notify) await client.query("SELECT pg_notify($1, $2)", [NEW_JOB_CHANNEL, name]);
    return toQueueSettings(name, row);
  });
}

function configure(ctx: PgContext, name: string, patch: QueueConfigPatch, audit: AuditRecord) {
  const rate = patch.rateLimit;
  return write(
    ctx,
    "queues.configure",
    name,
    audit,
    async (client) => {
      const res = await client.query(CONFIGURE, [
        name,
        patch.concurrency !== undefined,
        patch.concurrency ?? null,
        patch.groupConcurrency !== undefined,
        patch.groupConcurrency ?? null,
        rate !== undefined,
        rate?.max ?? null,
        rate?.perMs ?? null,
        patch.lagAlertMs !== undefined,
        patch.lagAlertMs ?? null,
      ]);
      if (rate === null) await client.query(DROP_STARTS, [name]);
      return res.rows[0];
    },
    true,
  );
}

// Queue names from the fetch (queued), processing, finished and dead-letter indexes; then per queue, counts
// from the same indexes. Done, cancelled and dead-letter counts stop at $1 rows (exactCountsUpTo + 1): a
// count that reaches it is estimated below.
const LIST = `WITH RECURSIVE ${distinctQueues("q1", "soniq_jobs", "status = 'queued'")},
  ${distinctQueues("q2", "soniq_jobs", "status = 'processing'")},
  ${distinctQueues("q3", "soniq_jobs", "status IN ('done', 'cancelled')")},
  ${distinctQueues("q4", "soniq_dead_letter_jobs", "")},
  names AS (SELECT name FROM soniq_queues
    UNION SELECT queue FROM q1 WHERE queue IS NOT NULL UNION SELECT queue FROM q2 WHERE queue IS NOT NULL
    UNION SELECT queue FROM q3 WHERE queue IS NOT NULL UNION SELECT queue FROM q4 WHERE queue IS NOT NULL)
SELECT n.name, q.paused, q.paused_at, q.concurrency, q.group_concurrency, q.rate_max, q.rate_per_ms, q.lag_alert_ms, q.updated_at,
  (SELECT count(*) FROM soniq_jobs j WHERE j.queue = n.name AND j.status = 'queued')::int AS queued,
  (SELECT count(*) FROM soniq_jobs j WHERE j.queue = n.name AND j.status = 'processing')::int AS processing,
  (SELECT count(*) FROM (SELECT FROM soniq_jobs j WHERE j.queue = n.name AND j.status = 'done' LIMIT $1) c)::int AS done,
  (SELECT count(*) FROM (SELECT FROM soniq_jobs j WHERE j.queue = n.name AND j.status = 'cancelled' LIMIT $1) c)::int
    AS cancelled,
  (SELECT count(*) FROM (SELECT FROM soniq_dead_letter_jobs d WHERE d.queue = n.name LIMIT $1) c)::int AS dead_letter,
  (SELECT (extract(epoch FROM now() - min(j.scheduled_at)) * 1000)::float8 FROM soniq_jobs j
    WHERE j.queue = n.name AND j.status = 'queued' AND j.scheduled_at <= now()) AS lag_ms
FROM names n LEFT JOIN soniq_queues q ON q.name = n.name
ORDER BY n.name`;

// The planner's row estimate (its statistics, including soniq_jobs_queue_status_stats; nothing is read).
const ESTIMATE: Record<EstimableCount, string> = {
  done: "EXPLAIN (FORMAT JSON) SELECT FROM soniq_jobs WHERE queue = $1 AND status = 'done'",
  cancelled: "EXPLAIN (FORMAT JSON) SELECT FROM soniq_jobs WHERE queue = $1 AND status = 'cancelled'",
  dead_letter: "EXPLAIN (FORMAT JSON) SELECT FROM soniq_dead_letter_jobs WHERE queue = $1",
};

async function estimate(client: pg.PoolClient, kind: EstimableCount, queue: string): Promise<number> {
  const res = await client.query(ESTIMATE[kind], [queue]);
  const plan = (res.rows[0]?.["QUERY PLAN"] as { Plan?: { "Plan Rows"?: unknown } }[] | undefined)?.[0];
  const rows = Number(plan?.Plan?.["Plan Rows"]);
  return Number.isFinite(rows) ? Math.round(rows) : 0;
}

async function list(ctx: PgContext, q: QueueListQuery): Promise<QueueInfo[]> {
  const cap = q.exactCountsUpTo + 1;
  // An operator's read: on the read replica when there is one.
  return inTransaction({ ...ctx, pool: ctx.readPool }, "queues.list", async (client) => {
    // The planner assumes ~100 names per skip scan, each with its count subqueries, so LIST's cost estimate
    // crosses jit_above_cost; compiling it took ~350 of ~390 ms on the 1M-row seed (it reads a few pages).
    await client.query("SET LOCAL jit = off");
    const res = await client.query(LIST, [cap]);
    const out: QueueInfo[] = [];
    for (const r of res.rows) {
      const name = String(r.name);
      const counts = {
        queued: Number(r.queued),
        processing: Number(r.processing),
        done: Number(r.done),
        cancelled: Number(r.cancelled),
        dead_letter: Number(r.dead_letter),
      };
      const estimated = ESTIMABLE_COUNTS.filter((k) => counts[k] >= cap);
      for (const k of estimated) counts[k] = Math.max(cap, await estimate(client, k, name));
      const total = counts.queued + counts.processing + counts.done + counts.cancelled + counts.dead_letter;
      const lagMs = r.lag_ms === null ? null : Number(r.lag_ms);
      out.push(queueInfo(toQueueSettings(name, r), { total, ...counts }, lagMs, estimated));
    }
    return out;
  });
}
