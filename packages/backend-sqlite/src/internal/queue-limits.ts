/**
 * The claim's queue controls on SQLite: the storage of a claim that covers a limited queue. Core's limited
 * claim (`runLimitedClaimSync` in `@soniq/core/backend`) decides what to take; this file's store reads and
 * writes. The claim runs under `BEGIN IMMEDIATE`, so every claimer in every process is serialised: the store
 * locks nothing more, and reading what is processing (and what started in the rate window) and then taking
 * jobs cannot race.
 *
 * `controlledQueues` reads the few `soniq_queues` rows that pause or limit a queue (a tiny table; with no
 * such row the claim takes its usual path unchanged). For each limited queue the store reads its usage
 * (starts pruned past the window first) and its first claimable jobs, each group topped up to its cap in
 * claim order (jobs without a group are not capped); for the open queues their first due jobs; it marks the
 * chosen jobs processing and records the starts of rate-limited queues.
 */
import type {
  ClaimCandidate,
  ClaimCap,
  ClaimRequest,
  LimitedClaimStore,
  QueueControls,
} from "@soniq/core/backend";
import { runLimitedClaimSync } from "@soniq/core/backend";
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

/** The limited claim's store over the claim's IMMEDIATE transaction. */
function claimStore<T extends { id: string }>(
  ctx: SqliteContext,
  workerId: string | null,
  stored: ReadonlyMap<string, QueueControls>,
  open: readonly string[],
): LimitedClaimStore<ClaimCandidate, T> {
  return {
    // The claim's IMMEDIATE transaction already runs alone, on the controls it read.
    lockQueues: () => stored,
    usage(queue, controls, dueUpTo) {
      let processing = 0;
      if (controls.concurrency !== null)
        processing = (ctx.statement(PROCESSING).get(queue) as { n: number }).n;
      let startsInWindow = 0;
      let windowOpensInMs: number | null = null;
      const rate = controls.rateLimit;
      if (rate !== null) {
        ctx.statement(PRUNE_STARTS).run({ queue, perMs: rate.perMs });
        const s = ctx.statement(STARTS).get({ queue, perMs: rate.perMs }) as {
          n: number;
          opens: number | null;
        };
        startsInWindow = s.n;
        windowOpensInMs = s.n > 0 ? s.opens : null;
      }
      const due = (ctx.statement(DUE).get({ queue, limit: dueUpTo }) as { n: number }).n;
      return { processing, startsInWindow, windowOpensInMs, due };
    },
    pick(queue, controls, ask) {
      return (
        controls.groupConcurrency === null
          ? ctx.statement(PICK_PLAIN).all({ queue, ask })
          : ctx.statement(PICK_GROUPED).all({ queue, ask, groupCap: controls.groupConcurrency })
      ) as ClaimCandidate[];
    },
    pickOpen(limit) {
      if (open.length === 0) return [];
      return ctx.statement(PICK_OPEN).all({ queues: jsonList(open), limit }) as ClaimCandidate[];
    },
    take(chosen, starts) {
      const ids = jsonList(chosen.map((c) => c.id));
      const taken = ctx.statement(TAKE).all({ ids, workerId }) as T[];
      for (const [queue, jobs] of starts)
        for (const job of jobs) ctx.statement(RECORD_START).run(queue, job.id);
      return taken;
    },
  };
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
  const store = claimStore<T>(ctx, request.workerId, controls, open);
  const { jobs, capped } = runLimitedClaimSync(store, { ...request, limited });
  return { rows: jobs, capped };
}
