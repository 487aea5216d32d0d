/** The jobs facet: enqueue (internal/enqueue.ts), reads, stats, cancel and expired-row cleanup on soniq_jobs. */
import {
  type AuditRecord,
  finishStep,
  type Job,
  type JobListQuery,
  type JobsFacet,
  type QueueStats,
  type StatsQuery,
} from "@soniq/core/backend";
import { auditCte, auditValues, writeAudit } from "./internal/audit-rows.js";
import { type PgContext, query, readQuery } from "./internal/context.js";
import { enqueue, enqueueMany } from "./internal/enqueue.js";
import { clientRunner, runFlow } from "./internal/flow-store.js";
import { listQuery, searchAndIds } from "./internal/list-query.js";
import { FINISHED_CHANNEL } from "./internal/listen-client.js";
import { distinctQueues } from "./internal/queue-names.js";
import { JOB_COLUMNS, mapJob, type Row } from "./internal/rows.js";
import { DELETE_ORPHAN_STEPS, FIRST_JOB_ID, ORPHAN_SWEEP_IDS } from "./internal/step-rows.js";
import { inTransaction, type PgTx } from "./internal/tx.js";

export function jobsFacet(ctx: PgContext): JobsFacet<PgTx> {
  const orphanSweep: OrphanCursor = { steps: FIRST_JOB_ID, signals: FIRST_JOB_ID };
  return {
    enqueue: (job, options) => enqueue(ctx, job, options),
    enqueueMany: (jobs, options) => enqueueMany(ctx, jobs, options),
    get: (id) => get(ctx, id),
    list: (q) => list(ctx, q),
    stats: (q) => stats(ctx, q),
    cancel: (id, audit) => cancel(ctx, id, audit),
    deleteExpired: () => deleteExpired(ctx, orphanSweep),
  };
}

async function get(ctx: PgContext, id: string): Promise<Job | null> {
  const res = await query<Row>(ctx, "jobs.get", {
    name: "soniq_get_job",
    text: `SELECT ${JOB_COLUMNS} FROM soniq_jobs WHERE id = $1`,
    values: [id],
  });
  const row = res.rows[0];
  return row ? mapJob(row) : null;
}

async function list(ctx: PgContext, q: JobListQuery): Promise<Job[]> {
  const conditions = [
    ["status = ANY(?::text[])", q.statuses === null ? null : [...q.statuses]],
    ["queue = ?", q.queue],
    ["job_name = ?", q.jobName],
    ...searchAndIds(q),
  ] as const;
  const select = `SELECT ${JOB_COLUMNS} FROM soniq_jobs`;
  // By id alone (UUIDv7, time-ordered): the primary key, read backwards (core/src/contract/jobs.ts `JobsFacet.list`).
  const res = await readQuery<Row>(ctx, "jobs.list", listQuery(select, conditions, null, q));
  return res.rows.map(mapJob);
}

const STATS = `SELECT
  count(*) FILTER (WHERE status = 'queued')::int AS queued,
  count(*) FILTER (WHERE status = 'processing')::int AS processing,
  count(*) FILTER (WHERE status = 'done')::int AS done,
  count(*) FILTER (WHERE status = 'cancelled')::int AS cancelled,
  (SELECT count(*)::int FROM soniq_dead_letter_jobs WHERE $1::text IS NULL OR queue = $1) AS dead_letter
FROM soniq_jobs WHERE $1::text IS NULL OR queue = $1`;

async function stats(ctx: PgContext, q: StatsQuery): Promise<QueueStats> {
  const res = await readQuery<Omit<QueueStats, "total">>(ctx, "jobs.stats", {
    text: STATS,
    values: [q.queue],
  });
  const row = res.rows[0] ?? { queued: 0, processing: 0, done: 0, cancelled: 0, dead_letter: 0 };
  const { queued, processing, done, dead_letter, cancelled } = row;
  return {
    total: queued + processing + done + dead_letter + cancelled,
    queued,
    processing,
    done,
    dead_letter,
    cancelled,
  };
}

// A cancelled job finished: waiters hear its id on the finished channel (sent at commit).
const CANCEL_AUDITED = `WITH cancelled AS (UPDATE soniq_jobs SET status = 'cancelled', updated_at = now()
    WHERE id = $1 AND status IN ('queued', 'processing') AND flow_id IS NULL RETURNING id),
  ${auditCte("cancelled", 2)}
SELECT id, pg_notify('${FINISHED_CHANNEL}', id::text) FROM cancelled`;

async function cancel(ctx: PgContext, id: string, audit: AuditRecord | undefined): Promise<boolean> {
  // A job outside flows is cancelled by one statement, as before flows existed; when it cancelled nothing, the
  // job may be a flow step's (or gone): then the step and its dependents follow in one transaction.
  if (audit) {
    const res = await query(ctx, "jobs.cancel", {
      text: CANCEL_AUDITED,
      values: [id, ...auditValues(audit)],
    });
    return res.rows.length === 1 || cancelStep(ctx, id, audit);
  }
  const res = await query(ctx, "jobs.cancel", {
    name: "soniq_cancel",
    text: `WITH cancelled AS (UPDATE soniq_jobs SET status = 'cancelled', updated_at = now()
      WHERE id = $1 AND status IN ('queued', 'processing') AND flow_id IS NULL RETURNING id)
    SELECT id, pg_notify('${FINISHED_CHANNEL}', id::text) FROM cancelled`,
    values: [id],
  });
  return res.rows.length === 1 || cancelStep(ctx, id, audit);
}

async function cancelStep(ctx: PgContext, id: string, audit: AuditRecord | undefined): Promise<boolean> {
  return inTransaction(ctx, "jobs.cancel", async (client) => {
    const res = await client.query<Row>(
      `UPDATE soniq_jobs SET status = 'cancelled', updated_at = now()
        WHERE id = $1 AND status IN ('queued', 'processing') AND flow_id IS NOT NULL RETURNING flow_id, step_ref`,
      [id],
    );
    const row = res.rows[0];
    if (row === undefined) return false;
    const program = finishStep(String(row.flow_id), String(row.step_ref), id, "cancelled", [], new Date());
    await runFlow(clientRunner(client), program);
    if (audit) await writeAudit(client, audit);
    await client.query(`SELECT pg_notify('${FINISHED_CHANNEL}', $1)`, [id]);
    return true;
  });
}

/**
 * The retention sweep: done rows whose result TTL has passed. It reads `idx_soniq_jobs_finished` (queue,
 * status, expires_at) queue by queue: the queue names by a skip scan of the same index, then each queue's
 * expired range, so a sweep reads the rows it deletes and one probe per queue, however many done rows are
 * kept (test/sweep-plan.test.ts). `OFFSET 0` keeps the per-queue read a subquery run once per queue: pulled
 * up into a join, the planner hashed the queue names and scanned the whole index for expired entries. The rows
 * are deleted by their tuple ids (a TID scan: 100,000 expired among 1,000,000 kept in 0.69 s, where a second
 * lookup through the primary key took 1.34 s). A row updated meanwhile (a late progress write) has a new tuple id
 * and is left to the next sweep; the statement's snapshot keeps every tuple id it read from being reused. A flow step's result is kept while its flow is open (a dependent reads it
 * through ctx.flow.parents()).
 */
const DELETE_EXPIRED = `WITH RECURSIVE ${distinctQueues("q", "soniq_jobs", "status IN ('done', 'cancelled')")}
DELETE FROM soniq_jobs j
WHERE j.ctid = ANY(ARRAY(SELECT e.ctid FROM q CROSS JOIN LATERAL (
    SELECT x.ctid FROM soniq_jobs x
    WHERE x.queue = q.queue AND x.status = 'done' AND x.expires_at <= now() OFFSET 0) e
  WHERE q.queue IS NOT NULL))
  AND j.status = 'done'
  AND (j.flow_id IS NULL OR NOT EXISTS (SELECT 1 FROM soniq_flows f
    WHERE f.id = j.flow_id AND f.state IN ('running', 'held')))`;

/** Where the next orphan sweep of each step table starts (internal/step-rows.ts `DELETE_ORPHAN_STEPS`). */
interface OrphanCursor {
  steps: string;
  signals: string;
}

/**
 * Then, in a statement of its own (so it sees the rows just deleted as gone), the durable steps and signals no
 * job and no dead letter owns any more (those of the rows this sweep deleted, and of done jobs deleted at
 * once), a bounded slice of each table per call, resuming where the last call stopped.
 */
async function deleteExpired(ctx: PgContext, cursor: OrphanCursor): Promise<number> {
  const res = await query(ctx, "jobs.deleteExpired", { text: DELETE_EXPIRED });
  const swept = await query<{ steps_after: string | null; signals_after: string | null }>(
    ctx,
    "jobs.deleteExpired",
    { text: DELETE_ORPHAN_STEPS, values: [cursor.steps, cursor.signals, ORPHAN_SWEEP_IDS] },
  );
  const row = swept.rows[0];
  cursor.steps = row?.steps_after ?? FIRST_JOB_ID;
  cursor.signals = row?.signals_after ?? FIRST_JOB_ID;
  return res.rowCount ?? 0;
}
