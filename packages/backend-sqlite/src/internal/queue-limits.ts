/**
 * The claim's queue controls on SQLite. The claim runs under `BEGIN IMMEDIATE`, so every claimer in every
 * process is serialised: counting what is processing (and what started in the rate window) and then
 * taking that many jobs cannot race.
 *
 * `controlledQueues` reads the few `soniq_queues` rows that pause or limit a queue (a tiny table; with no
 * such row the claim takes its usual path unchanged). A limited queue is claimed on its own:
 * slots = min(asked, concurrency - processing, rate_max - starts in the window), and with
 * `group_concurrency` each group is topped up to its cap in claim order (jobs without a group are not capped).
 * Starts of a rate-limited queue are recorded in `soniq_queue_starts` and pruned past the window. A claim
 * that filled the window also reads when its oldest start leaves it; a short claim then asks which limited
 * queues still have due jobs (`capped`, runs.ts).
 */

import type { SqliteContext } from "./context.js";
import type { QueueRecord } from "./queue-rows.js";
import { QUEUE_COLUMNS } from "./queue-rows.js";
import { JOB_COLUMNS, NOW } from "./sql.js";

const CONTROLLED = `SELECT ${QUEUE_COLUMNS} FROM soniq_queues
  WHERE paused = 1 OR concurrency IS NOT NULL OR group_concurrency IS NOT NULL OR rate_max IS NOT NULL`;

/** Queues that are paused or limited, by name (usually none). */
export function controlledQueues(ctx: SqliteContext): Map<string, QueueRecord> {
  const rows = ctx.statement(CONTROLLED).all() as QueueRecord[];
  return new Map(rows.map((r) => [r.name, r]));
}

const PROCESSING = "SELECT count(*) AS n FROM soniq_jobs WHERE status = 'processing' AND queue = ?";
const PRUNE_STARTS = `DELETE FROM soniq_queue_starts WHERE queue = @queue AND started_at <= ${NOW} - @perMs`;
const COUNT_STARTS = "SELECT count(*) AS n FROM soniq_queue_starts WHERE queue = ?";
const RECORD_START = `INSERT INTO soniq_queue_starts (queue, started_at, job_id) VALUES (?, ${NOW}, ?)
  ON CONFLICT DO NOTHING`;

const ORDER = "ORDER BY priority, scheduled_at, rowid";
const CLAIM_SET = `UPDATE soniq_jobs
    SET status = 'processing', attempts = attempts + 1, worker_id = @workerId, updated_at = ${NOW}
    WHERE rowid IN`;
const RETURNING = `RETURNING ${JOB_COLUMNS}, rowid AS claim_order`;

const CLAIM_LIMITED = `${CLAIM_SET} (SELECT rowid FROM soniq_jobs
    WHERE status = 'queued' AND queue = @queue AND scheduled_at <= ${NOW} ${ORDER} LIMIT @slots)
  ${RETURNING}`;

// Each group's due jobs numbered in claim order; a job fits while its number plus the group's processing
// count stays within the cap.
const CLAIM_GROUPED = `${CLAIM_SET} (SELECT r FROM (
      SELECT rowid AS r, priority, scheduled_at, "group" AS g,
        ROW_NUMBER() OVER (PARTITION BY "group" ORDER BY priority, scheduled_at, rowid) AS n
      FROM soniq_jobs WHERE status = 'queued' AND queue = @queue AND scheduled_at <= ${NOW}) c
    WHERE c.g IS NULL OR c.n + (SELECT count(*) FROM soniq_jobs p
      WHERE p.status = 'processing' AND p.queue = @queue AND p."group" = c.g) <= @groupCap
    ORDER BY c.priority, c.scheduled_at, c.r LIMIT @slots)
  ${RETURNING}`;

// When the window's oldest start leaves it (ms from now, at least 1).
const WINDOW_OPENS = `SELECT max(1, min(started_at) + @perMs - ${NOW}) AS ms FROM soniq_queue_starts
  WHERE queue = @queue`;

/** One limited queue's claim: the rows, and when its rate window opens again if this claim filled it. */
export interface LimitedClaim<T> {
  rows: T[];
  windowOpensInMs: number | null;
}

/** Claim up to `limit` jobs from one limited queue (inside the claim's IMMEDIATE transaction). */
export function claimLimited<T extends { id: string }>(
  ctx: SqliteContext,
  q: QueueRecord,
  limit: number,
  workerId: string | null,
): LimitedClaim<T> {
  let slots = limit;
  if (q.concurrency !== null) {
    const { n } = ctx.statement(PROCESSING).get(q.name) as { n: number };
    slots = Math.min(slots, q.concurrency - n);
  }
  let startsLeft: number | null = null;
  if (q.rate_max !== null && q.rate_per_ms !== null) {
    ctx.statement(PRUNE_STARTS).run({ queue: q.name, perMs: q.rate_per_ms });
    const { n } = ctx.statement(COUNT_STARTS).get(q.name) as { n: number };
    startsLeft = q.rate_max - n;
    slots = Math.min(slots, startsLeft);
  }
  let rows: T[] = [];
  if (slots > 0) {
    const params = { queue: q.name, slots, workerId, groupCap: q.group_concurrency };
    rows = (
      q.group_concurrency === null
        ? ctx.statement(CLAIM_LIMITED).all(params)
        : ctx.statement(CLAIM_GROUPED).all(params)
    ) as T[];
    if (startsLeft !== null) for (const row of rows) ctx.statement(RECORD_START).run(q.name, row.id);
  }
  if (startsLeft === null || rows.length < startsLeft) return { rows, windowOpensInMs: null };
  const opens = ctx.statement(WINDOW_OPENS).get({ queue: q.name, perMs: q.rate_per_ms }) as {
    ms: number | null;
  };
  return { rows, windowOpensInMs: opens.ms };
}

const HAS_DUE_JOBS = `SELECT EXISTS (SELECT 1 FROM soniq_jobs
  WHERE status = 'queued' AND queue = ? AND scheduled_at <= ${NOW}) AS due`;

/** Whether the queue has due queued jobs (after a short claim: ones a limit held back). */
export function hasDueJobs(ctx: SqliteContext, queue: string): boolean {
  return (ctx.statement(HAS_DUE_JOBS).get(queue) as { due: number }).due === 1;
}
