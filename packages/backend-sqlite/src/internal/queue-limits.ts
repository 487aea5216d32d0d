/**
 * The claim's queue controls on SQLite: the storage steps of a claim that covers a limited queue. What to
 * take is decided by core (`claimQueues`, `queueSlots`, `chooseClaim` in `@soniq/core/backend`); this file
 * reads and writes. The claim runs under `BEGIN IMMEDIATE`, so every claimer in every process is
 * serialised: reading what is processing (and what started in the rate window) and then taking jobs cannot
 * race.
 *
 * `controlledQueues` reads the few `soniq_queues` rows that pause or limit a queue (a tiny table; with no
 * such row the claim takes its usual path unchanged). For each limited queue the claim reads its usage
 * (starts pruned past the window first) and its first claimable jobs, each group topped up to its cap in
 * claim order (jobs without a group are not capped); for the open queues their first due jobs; core
 * chooses; the chosen jobs are marked processing and the starts of rate-limited queues recorded.
 */
import type { ClaimRequest, LimitedQueueRead, QueueControls } from "@soniq/core/backend";
import { type ClaimCap, chooseClaim, limitedBudget, queueSlots } from "@soniq/core/backend";
import type { SqliteContext } from "./context.js";
import type { QueueRecord } from "./queue-rows.js";
import { QUEUE_COLUMNS } from "./queue-rows.js";
import { JOB_COLUMNS, jsonList, NOW } from "./sql.js";

const CONTROLLED = `SELECT ${QUEUE_COLUMNS} FROM soniq_queues
  WHERE paused = 1 OR concurrency IS NOT NULL OR group_concurrency IS NOT NULL OR rate_max IS NOT NULL`;

function controlsOf(r: QueueRecord): QueueControls {
  return {
    paused: r.paused === 1,
    concurrency: r.concurrency,
    groupConcurrency: r.group_concurrency,
    rateLimit:
      r.rate_max === null || r.rate_per_ms === null ? null : { max: r.rate_max, perMs: r.rate_per_ms },
  };
}

/** Queues that are paused or limited, by name (usually none). */
export function controlledQueues(ctx: SqliteContext): Map<string, QueueControls> {
  const rows = ctx.statement(CONTROLLED).all() as QueueRecord[];
  return new Map(rows.map((r) => [r.name, controlsOf(r)]));
}

const PROCESSING = "SELECT count(*) AS n FROM soniq_jobs WHERE status = 'processing' AND queue = ?";
const PRUNE_STARTS = `DELETE FROM soniq_queue_starts WHERE queue = @queue AND started_at <= ${NOW} - @perMs`;
const STARTS = `SELECT count(*) AS n, max(1, min(started_at) + @perMs - ${NOW}) AS opens
  FROM soniq_queue_starts WHERE queue = @queue`;
const DUE = `SELECT count(*) AS n FROM (SELECT 1 FROM soniq_jobs
  WHERE status = 'queued' AND queue = @queue AND scheduled_at <= ${NOW} LIMIT @limit)`;
const RECORD_START = `INSERT INTO soniq_queue_starts (queue, started_at, job_id) VALUES (?, ${NOW}, ?)
  ON CONFLICT DO NOTHING`;

const ORDER = "ORDER BY priority, scheduled_at, rowid";
const KEYS = "id, priority, scheduled_at AS scheduledAt, created_at AS createdAt";

const PICK_PLAIN = `SELECT ${KEYS} FROM soniq_jobs
  WHERE status = 'queued' AND queue = @queue AND scheduled_at <= ${NOW} ${ORDER} LIMIT @ask`;

// Each group's due jobs numbered in claim order; a job fits while its number plus the group's processing
// count stays within the cap.
const PICK_GROUPED = `SELECT ${KEYS} FROM (
      SELECT id, priority, scheduled_at, created_at, rowid AS r, "group" AS g,
        ROW_NUMBER() OVER (PARTITION BY "group" ORDER BY priority, scheduled_at, rowid) AS n
      FROM soniq_jobs WHERE status = 'queued' AND queue = @queue AND scheduled_at <= ${NOW}) c
    WHERE c.g IS NULL OR c.n + (SELECT count(*) FROM soniq_jobs p
      WHERE p.status = 'processing' AND p.queue = @queue AND p."group" = c.g) <= @groupCap
    ORDER BY c.priority, c.scheduled_at, c.r LIMIT @ask`;

const PICK_OPEN = `SELECT ${KEYS} FROM soniq_jobs
  WHERE status = 'queued' AND queue IN (SELECT value FROM json_each(@queues)) AND scheduled_at <= ${NOW}
  ${ORDER} LIMIT @limit`;

const TAKE = `UPDATE soniq_jobs
  SET status = 'processing', attempts = attempts + 1, worker_id = @workerId, updated_at = ${NOW}
  WHERE id IN (SELECT value FROM json_each(@ids)) AND status = 'queued'
  RETURNING ${JOB_COLUMNS}`;

interface Candidate {
  id: string;
  priority: number;
  scheduledAt: number;
  createdAt: number;
}

function readLimited(
  ctx: SqliteContext,
  queue: string,
  limits: QueueControls,
  request: ClaimRequest,
): LimitedQueueRead<Candidate> {
  let processing = 0;
  if (limits.concurrency !== null) processing = (ctx.statement(PROCESSING).get(queue) as { n: number }).n;
  let startsInWindow = 0;
  let windowOpensInMs: number | null = null;
  const rate = limits.rateLimit;
  if (rate !== null) {
    ctx.statement(PRUNE_STARTS).run({ queue, perMs: rate.perMs });
    const s = ctx.statement(STARTS).get({ queue, perMs: rate.perMs }) as { n: number; opens: number | null };
    startsInWindow = s.n;
    windowOpensInMs = s.n > 0 ? s.opens : null;
  }
  const budget = limitedBudget(request);
  const due = (ctx.statement(DUE).get({ queue, limit: budget + 1 }) as { n: number }).n;
  const usage = { processing, startsInWindow, windowOpensInMs, due };
  const ask = Math.min(budget, queueSlots(limits, usage), due);
  if (ask <= 0) return { queue, limits, usage, candidates: [] };
  const candidates = (
    limits.groupConcurrency === null
      ? ctx.statement(PICK_PLAIN).all({ queue, ask })
      : ctx.statement(PICK_GROUPED).all({ queue, ask, groupCap: limits.groupConcurrency })
  ) as Candidate[];
  return { queue, limits, usage, candidates };
}

/**
 * A claim covering `limited` queues and the `open` ones (inside the claim's IMMEDIATE transaction). Returns
 * the claimed rows in claim order and the `capped` answer.
 */
export function claimWithLimits<T extends { id: string }>(
  ctx: SqliteContext,
  request: ClaimRequest,
  controls: ReadonlyMap<string, QueueControls>,
  open: readonly string[],
  limited: readonly string[],
): { rows: T[]; capped: ClaimCap | null } {
  const reads = limited.map((q) => readLimited(ctx, q, controls.get(q) as QueueControls, request));
  const openRows =
    open.length > 0
      ? (ctx.statement(PICK_OPEN).all({ queues: jsonList(open), limit: request.limit }) as Candidate[])
      : [];
  const choice = chooseClaim(request, openRows, reads);
  if (choice.chosen.length === 0) return { rows: [], capped: choice.capped };
  const ids = choice.chosen.map((c) => c.id);
  const taken = ctx.statement(TAKE).all({ ids: jsonList(ids), workerId: request.workerId }) as T[];
  for (const read of reads) {
    if (read.limits.rateLimit === null) continue;
    for (const job of choice.fromLimited.get(read.queue) ?? [])
      ctx.statement(RECORD_START).run(read.queue, job.id);
  }
  const byId = new Map(taken.map((row) => [row.id, row]));
  return { rows: ids.flatMap((id) => byId.get(id) ?? []), capped: choice.capped };
}
