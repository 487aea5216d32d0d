/**
 * The claim's queue controls on Postgres: the storage of a claim that covers a limited queue. Core's limited
 * claim (`runLimitedClaimAsync` in `@soniq/core/backend`) decides what to take; this file's store locks,
 * reads and writes.
 *
 * Paused and limited queues are left out of the usual claim statement by uncorrelated reads of
 * `soniq_queues` (a tiny table), evaluated once per statement (runs.ts). A claim that covers limited queues
 * runs as one transaction: the store locks those queues' `soniq_queues` rows FOR UPDATE (by name, so two
 * claims never wait on each other in a cycle), so limited claims of one queue serialise across every process;
 * under the lock it reads each queue's usage (what is processing, what started in the rate window,
 * `soniq_queue_starts`, pruned past it, and how many jobs are due) and its first claimable jobs (each group
 * topped up to its cap), reads the open queues' first due jobs (FOR UPDATE SKIP LOCKED), and takes what core
 * chose: marks the jobs processing and records the starts of rate-limited queues in one statement.
 * Read committed: each statement after the lock sees every claim committed before it.
 *
 * Which queues are limited is cached for `LIMITS_TTL_MS` per backend: a queue limited just now waits that
 * long for its first limited claim (the usual claim already leaves it alone), never longer.
 */
import type {
  AsyncLimitedClaimStore,
  ClaimCandidate,
  ClaimResult,
  Job,
  QueueControls,
  QueueUsage,
} from "@soniq/core/backend";
import { runLimitedClaimAsync } from "@soniq/core/backend";
import type pg from "pg";
import { CLAIM_COLUMNS, CLAIM_TYPES, mapClaimedRow } from "./claim-rows.js";
import { type PgContext, query } from "./context.js";
import { inTransaction } from "./tx.js";

const LIMITS_TTL_MS = 1000;

/** The SQL condition (on `soniq_queues q`) under which the usual claim leaves a queue alone. */
export const CONTROLLED = `(q.paused OR q.concurrency IS NOT NULL OR q.group_concurrency IS NOT NULL
    OR q.rate_max IS NOT NULL)`;

const SETTINGS = "name, paused, concurrency, group_concurrency, rate_max, rate_per_ms";

const LIMITED = `SELECT ${SETTINGS} FROM soniq_queues
  WHERE NOT paused AND (concurrency IS NOT NULL OR group_concurrency IS NOT NULL OR rate_max IS NOT NULL)`;

interface SettingsRow {
  name: string;
  paused: boolean;
  concurrency: number | null;
  group_concurrency: number | null;
  rate_max: number | null;
  rate_per_ms: number | null;
}

function controlsOf(row: SettingsRow): QueueControls {
  return {
    paused: row.paused,
    concurrency: row.concurrency,
    groupConcurrency: row.group_concurrency,
    rateLimit:
      row.rate_max !== null && row.rate_per_ms !== null
        ? { max: row.rate_max, perMs: row.rate_per_ms }
        : null,
  };
}

export class LimitedQueues {
  #controls = new Map<string, QueueControls>();
  #at = Number.NEGATIVE_INFINITY;

  /** The limited (and unpaused) queues with their controls, read at most once per `LIMITS_TTL_MS`. */
  async controls(ctx: PgContext): Promise<ReadonlyMap<string, QueueControls>> {
    const now = Date.now();
    if (now - this.#at >= LIMITS_TTL_MS) {
      const res = await query<SettingsRow>(ctx, "runs.claim", {
        name: "soniq_limited_queues",
        text: LIMITED,
      });
      this.#controls = new Map(res.rows.map((r) => [r.name, controlsOf(r)]));
      this.#at = now;
    }
    return this.#controls;
  }
}

const LOCK = `SELECT ${SETTINGS} FROM soniq_queues WHERE name = ANY($1::text[]) ORDER BY name FOR UPDATE`;

const WINDOW = "make_interval(secs => $3::float8 / 1000)";

/**
 * The rate window's clock: the statement's start, not the transaction's (`now()`). A claim may wait for the
 * queue's lock after BEGIN; stamped or counted at BEGIN, a claim that waited would count a window already
 * pruned by the claims that went before it (they ran later, by the clock) and start too many. Under the lock
 * the statements of successive claims start in order, so their stamps do too.
 */
const CLOCK = "statement_timestamp()";

/** One limited queue's usage ($1 queue, $2 how far to count due jobs, $3 the rate window's ms when rate-limited). */
function usageSql(concurrency: boolean, rate: boolean): string {
  const processing = concurrency
    ? "(SELECT count(*)::int FROM soniq_jobs WHERE status = 'processing' AND queue = $1)"
    : "0";
  const inWindow = `FROM soniq_queue_starts WHERE queue = $1 AND started_at > ${CLOCK} - ${WINDOW}`;
  const starts = rate ? `(SELECT count(*)::int ${inWindow})` : "0";
  const opens = rate
    ? `(SELECT GREATEST(1, ceil(extract(epoch FROM min(started_at) + ${WINDOW} - ${CLOCK}) * 1000))::int ${inWindow})`
    : "NULL::int";
  const prune = rate
    ? `WITH pruned AS (DELETE FROM soniq_queue_starts WHERE queue = $1 AND started_at <= ${CLOCK} - ${WINDOW}) `
    : "";
  return `${prune}SELECT ${processing} AS processing, ${starts} AS starts, ${opens} AS opens,
    (SELECT count(*)::int FROM (SELECT 1 FROM soniq_jobs
      WHERE status = 'queued' AND queue = $1 AND scheduled_at <= now() LIMIT $2) d) AS due`;
}

const KEYS = `id, priority, (extract(epoch FROM scheduled_at) * 1000)::float8 AS s,
  (extract(epoch FROM created_at) * 1000)::float8 AS c`;

const PICK_PLAIN = `SELECT ${KEYS} FROM soniq_jobs
  WHERE status = 'queued' AND queue = $1 AND scheduled_at <= now()
  ORDER BY priority, scheduled_at, created_at LIMIT $2 FOR UPDATE SKIP LOCKED`;

// Each group's due jobs numbered in claim order; a job fits while its number plus the group's processing
// count stays within the cap. No SKIP LOCKED here (window functions cannot lock); the queue row's lock
// already serialises limited claims, and the UPDATE re-checks `status = 'queued'`.
const PICK_GROUPED = `WITH held AS (
      SELECT "group" AS g, count(*) AS k FROM soniq_jobs
      WHERE status = 'processing' AND queue = $1 AND "group" IS NOT NULL GROUP BY "group"),
    c AS (SELECT id, priority, scheduled_at, created_at, "group" AS g,
        row_number() OVER (PARTITION BY "group" ORDER BY priority, scheduled_at, created_at) AS n
      FROM soniq_jobs WHERE status = 'queued' AND queue = $1 AND scheduled_at <= now())
  SELECT ${KEYS} FROM c LEFT JOIN held h ON h.g = c.g
  WHERE c.g IS NULL OR c.n + COALESCE(h.k, 0) <= $3
  ORDER BY c.priority, c.scheduled_at, c.created_at LIMIT $2`;

// The open queues' first due jobs: the usual claim's filter, and never a queue this claim takes as limited.
const PICK_OPEN = (queueFilter: string) => `SELECT ${KEYS} FROM soniq_jobs
  WHERE status = 'queued' AND scheduled_at <= now()${queueFilter} AND queue <> ALL($2::text[])
    AND COALESCE(queue <> ALL(ARRAY(SELECT q.name FROM soniq_queues q WHERE ${CONTROLLED})), true)
  ORDER BY priority, scheduled_at, created_at LIMIT $1 FOR UPDATE SKIP LOCKED`;

const TAKE = `WITH picked AS (
    UPDATE soniq_jobs SET status = 'processing', attempts = attempts + 1, worker_id = $2, updated_at = ${CLOCK}
    WHERE id = ANY($1::uuid[]) AND (status || '') = 'queued' -- a filter, not the fetch index (settle-sql.ts PROCESSING)
      AND ($2::uuid IS NULL OR EXISTS (SELECT 1 FROM soniq_workers w WHERE w.id = $2::uuid))
    RETURNING ${CLAIM_COLUMNS}),
  started AS (INSERT INTO soniq_queue_starts (queue, started_at, job_id)
    SELECT queue, ${CLOCK}, id FROM picked WHERE queue = ANY($3::text[]) ON CONFLICT DO NOTHING)
  SELECT * FROM picked`;

interface KeyRow {
  id: string;
  priority: number;
  s: number;
  c: number;
}

const candidate = (r: KeyRow): ClaimCandidate => ({
  id: r.id,
  priority: r.priority,
  scheduledAt: r.s,
  createdAt: r.c,
});

interface UsageRow {
  processing: number;
  starts: number;
  opens: number | null;
  due: number;
}

/** The limited claim's store over the claim's transaction (`open`: null for every queue without controls). */
function claimStore(
  client: pg.PoolClient,
  workerId: string | null,
  open: readonly string[] | null,
  limited: readonly string[],
): AsyncLimitedClaimStore<ClaimCandidate, Job> {
  return {
    async lockQueues(names) {
      const rows = (await client.query<SettingsRow>(LOCK, [names])).rows;
      return new Map(rows.map((r) => [r.name, controlsOf(r)]));
    },
    async usage(queue, controls, dueUpTo): Promise<QueueUsage> {
      const rate = controls.rateLimit;
      const values: unknown[] = [queue, dueUpTo];
      if (rate !== null) values.push(rate.perMs);
      const sql = usageSql(controls.concurrency !== null, rate !== null);
      const u = (await client.query<UsageRow>(sql, values)).rows[0];
      return {
        processing: Number(u?.processing ?? 0),
        startsInWindow: Number(u?.starts ?? 0),
        windowOpensInMs: u?.opens === null || u?.opens === undefined ? null : Number(u.opens),
        due: Number(u?.due ?? 0),
      };
    },
    async pick(queue, controls, ask) {
      const pick =
        controls.groupConcurrency !== null
          ? client.query<KeyRow>(PICK_GROUPED, [queue, ask, controls.groupConcurrency])
          : client.query<KeyRow>(PICK_PLAIN, [queue, ask]);
      return (await pick).rows.map(candidate);
    },
    async pickOpen(limit) {
      if (open !== null && open.length === 0) return [];
      const pick =
        open === null
          ? client.query<KeyRow>(PICK_OPEN(""), [limit, limited])
          : client.query<KeyRow>(PICK_OPEN(" AND queue = ANY($3::text[])"), [limit, limited, open]);
      return (await pick).rows.map(candidate);
    },
    async take(chosen, starts) {
      const taken = await client.query<unknown[]>({
        text: TAKE,
        values: [chosen.map((c) => c.id), workerId, [...starts.keys()]],
        rowMode: "array",
        types: CLAIM_TYPES,
      });
      return taken.rows.map((r) => mapClaimedRow(r, workerId));
    },
  };
}

/**
 * A claim covering `limited` queues (and the `open` ones): one transaction under the limited queues' locks.
 * Returns the jobs in claim order; an empty result for an unknown worker is the caller's to explain.
 */
export function claimWithLimits(
  ctx: PgContext,
  request: { limit: number; limitedMax?: number; workerId: string | null },
  open: readonly string[] | null,
  limited: readonly string[],
): Promise<ClaimResult> {
  return inTransaction(ctx, "runs.claim", (client) =>
    runLimitedClaimAsync(claimStore(client, request.workerId, open, limited), {
      limit: request.limit,
      limitedMax: request.limitedMax,
      limited,
    }),
  );
}
