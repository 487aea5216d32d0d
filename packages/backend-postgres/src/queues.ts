/**
 * The queues facet: queue controls in `soniq_queues` and the operator view of every queue. Each action
 * and its audit row commit in one transaction; resume and configure NOTIFY the queue so idle workers
 * claim at once. The claim (runs.ts, internal/queue-limits.ts) enforces the settings.
 */
import type { QueueInfo, QueueSettings } from "@soniq/core";
import { type AuditRecord, type QueueConfigPatch, type QueuesFacet, queueInfo } from "@soniq/core/backend";
import type pg from "pg";
import { type PgContext, query } from "./internal/context.js";
import { NEW_JOB_CHANNEL } from "./internal/listen-client.js";
import { QUEUE_COLUMNS, toQueueSettings, writeAudit } from "./internal/queue-rows.js";
import { type Row, toDate } from "./internal/rows.js";
import { inTransaction } from "./internal/transaction.js";

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
      ]);
      if (rate === null) await client.query(DROP_STARTS, [name]);
      return res.rows[0];
    },
    true,
  );
}

const LIST = `WITH j AS (
    SELECT queue,
      count(*) FILTER (WHERE status = 'queued')::int AS queued,
      count(*) FILTER (WHERE status = 'processing')::int AS processing,
      count(*) FILTER (WHERE status = 'done')::int AS done,
      count(*) FILTER (WHERE status = 'cancelled')::int AS cancelled,
      (extract(epoch FROM now() - min(scheduled_at) FILTER (WHERE status = 'queued' AND scheduled_at <= now()))
        * 1000)::float8 AS lag_ms
    FROM soniq_jobs GROUP BY queue),
  d AS (SELECT queue, count(*)::int AS n FROM soniq_dead_letter_jobs GROUP BY queue),
  names AS (SELECT name FROM soniq_queues UNION SELECT queue FROM j UNION SELECT queue FROM d)
SELECT n.name, q.paused, q.paused_at, q.concurrency, q.group_concurrency, q.rate_max, q.rate_per_ms,
  q.updated_at, COALESCE(j.queued, 0) AS queued, COALESCE(j.processing, 0) AS processing,
  COALESCE(j.done, 0) AS done, COALESCE(j.cancelled, 0) AS cancelled, COALESCE(d.n, 0) AS dead_letter, j.lag_ms
FROM names n LEFT JOIN soniq_queues q ON q.name = n.name LEFT JOIN j ON j.queue = n.name
  LEFT JOIN d ON d.queue = n.name
ORDER BY n.name`;

async function list(ctx: PgContext): Promise<QueueInfo[]> {
  const res = await query(ctx, "queues.list", { text: LIST });
  return res.rows.map((r) => {
    const name = String(r.name);
    const s = toQueueSettings(name, r);
    const [queued, processing, done, cancelled, deadLetter] = [
      r.queued,
      r.processing,
      r.done,
      r.cancelled,
      r.dead_letter,
    ].map(Number) as [number, number, number, number, number];
    const stats = {
      total: queued + processing + done + cancelled + deadLetter,
      queued,
      processing,
      done,
      dead_letter: deadLetter,
      cancelled,
    };
    return queueInfo(s, stats, r.lag_ms === null ? null : Number(r.lag_ms));
  });
}

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
    list: () => list(ctx),
    recentStarts: async (name, perMs) => {
      const res = await query(ctx, "queues.recentStarts", { text: RECENT_STARTS, values: [name, perMs] });
      const row = res.rows[0];
      return { count: Number(row?.n ?? 0), oldestAt: row?.oldest == null ? null : toDate(row.oldest) };
    },
  };
}
