/**
 * The claim's queue controls on Postgres.
 *
 * Paused and limited queues are left out of the usual claim statement by uncorrelated reads of
 * `soniq_queues` (a tiny table), evaluated once per statement: a one-time NOT EXISTS for one queue, else
 * `COALESCE(queue <> ALL(ARRAY(SELECT name ...)), true)`, a plain filter on the fetch index scan, hidden from
 * the column statistics (runs.ts says why). The default path keeps its plan (a correlated NOT EXISTS made the
 * planner hash-anti-join a seq scan and sort). Being part of the statement, a pause is seen by the very next
 * claim. Limited queues are claimed here, one queue per transaction: the queue's `soniq_queues` row is
 * locked FOR UPDATE, so limited claims of one queue serialise across every process; under that lock the
 * claim counts what is processing (and what started in the rate window, `soniq_queue_starts`), takes
 * that many jobs, and records their starts. Read committed: each statement after the lock sees every
 * claim committed before it. A claim that filled the rate window also reads when its oldest start
 * leaves it; a short claim then asks which limited queues still have due jobs (`capped`, runs.ts).
 *
 * Which queues are limited is cached for `LIMITS_TTL_MS` per backend: a queue limited just now waits that
 * long for its first limited claim (the default claim already leaves it alone), never longer.
 */
import type pg from "pg";
import { type PgContext, query } from "./context.js";
import { inTransaction } from "./transaction.js";

const LIMITS_TTL_MS = 1000;

/** The SQL condition (on `soniq_queues q`) under which the default claim leaves a queue alone. */
export const CONTROLLED = `(q.paused OR q.concurrency IS NOT NULL OR q.group_concurrency IS NOT NULL
    OR q.rate_max IS NOT NULL)`;

const LIMITED = `SELECT name FROM soniq_queues
  WHERE NOT paused AND (concurrency IS NOT NULL OR group_concurrency IS NOT NULL OR rate_max IS NOT NULL)`;

export class LimitedQueues {
  #names: string[] = [];
  #at = Number.NEGATIVE_INFINITY;

  /** The limited (and unpaused) queues, read at most once per `LIMITS_TTL_MS`. */
  async names(ctx: PgContext): Promise<string[]> {
    const now = Date.now();
    if (now - this.#at >= LIMITS_TTL_MS) {
      const res = await query<{ name: string }>(ctx, "runs.claim", {
        name: "soniq_limited_queues",
        text: LIMITED,
      });
      this.#names = res.rows.map((r) => r.name);
      this.#at = now;
    }
    return this.#names;
  }
}

const LOCK = `SELECT paused, concurrency, group_concurrency, rate_max, rate_per_ms
  FROM soniq_queues WHERE name = $1 FOR UPDATE`;
const PROCESSING = "SELECT count(*)::int AS n FROM soniq_jobs WHERE status = 'processing' AND queue = $1";
const STARTS = `WITH pruned AS (DELETE FROM soniq_queue_starts
    WHERE queue = $1 AND started_at <= now() - make_interval(secs => $2::float8 / 1000))
  SELECT count(*)::int AS n FROM soniq_queue_starts
  WHERE queue = $1 AND started_at > now() - make_interval(secs => $2::float8 / 1000)`;

const WORKER_OK = "($3::uuid IS NULL OR EXISTS (SELECT 1 FROM soniq_workers w WHERE w.id = $3::uuid))";

const PICK_PLAIN = `SELECT id FROM soniq_jobs
    WHERE status = 'queued' AND queue = $1 AND scheduled_at <= now() AND ${WORKER_OK}
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
  SELECT c.id FROM c LEFT JOIN held h ON h.g = c.g
  WHERE ${WORKER_OK} AND (c.g IS NULL OR c.n + COALESCE(h.k, 0) <= $4)
  ORDER BY c.priority, c.scheduled_at, c.created_at LIMIT $2`;

const claimSql = (pick: string, columns: string, recordStarts: boolean) => `WITH picked AS (
    UPDATE soniq_jobs SET status = 'processing', attempts = attempts + 1, worker_id = $3, updated_at = now()
    WHERE id = ANY(ARRAY(${pick})) AND status = 'queued'
    RETURNING ${columns})${
      recordStarts
        ? `, started AS (INSERT INTO soniq_queue_starts (queue, started_at, job_id)
    SELECT $1, now(), id FROM picked ON CONFLICT DO NOTHING)`
        : ""
    }
  SELECT * FROM picked`;

interface Lock {
  paused: boolean;
  concurrency: number | null;
  group_concurrency: number | null;
  rate_max: number | null;
  rate_per_ms: number | null;
}

/** Slots under the concurrency and the rate window, and the starts the window has left (null: not read). */
async function freeSlots(
  client: pg.PoolClient,
  queue: string,
  lock: Lock,
  limit: number,
): Promise<{ slots: number; startsLeft: number | null }> {
  let slots = limit;
  if (lock.concurrency !== null) {
    const res = await client.query<{ n: number }>(PROCESSING, [queue]);
    slots = Math.min(slots, lock.concurrency - (res.rows[0]?.n ?? 0));
  }
  let startsLeft: number | null = null;
  if (slots > 0 && lock.rate_max !== null && lock.rate_per_ms !== null) {
    const res = await client.query<{ n: number }>(STARTS, [queue, lock.rate_per_ms]);
    startsLeft = lock.rate_max - (res.rows[0]?.n ?? 0);
    slots = Math.min(slots, startsLeft);
  }
  return { slots, startsLeft };
}

// When the window's oldest start leaves it (ms from now, at least 1).
const WINDOW_OPENS = `SELECT GREATEST(1, ceil(extract(epoch FROM
    min(started_at) + make_interval(secs => $2::float8 / 1000) - now()) * 1000))::int AS ms
  FROM soniq_queue_starts WHERE queue = $1 AND started_at > now() - make_interval(secs => $2::float8 / 1000)`;

/**
 * One limited queue's claim: the rows, and when its rate window opens again if this claim filled it.
 * `limited` is false when the queue turned out paused or unlimited (the cached list was behind).
 */
export interface LimitedClaim {
  rows: unknown[][];
  limited: boolean;
  windowOpensInMs: number | null;
}

/**
 * Claim up to `limit` jobs from one limited queue, in its own transaction under the queue row's lock.
 * Rows come back as arrays of `columns` (the claim's column list).
 */
export function claimLimited(
  ctx: PgContext,
  queue: string,
  limit: number,
  workerId: string | null,
  columns: string,
  types: pg.CustomTypesConfig,
): Promise<LimitedClaim> {
  return inTransaction(ctx, "runs.claim", async (client) => {
    const lock = (await client.query<Lock>(LOCK, [queue])).rows[0];
    if (lock === undefined || lock.paused) return { rows: [], limited: false, windowOpensInMs: null };
    const limited = lock.concurrency !== null || lock.group_concurrency !== null || lock.rate_max !== null;
    const { slots, startsLeft } = await freeSlots(client, queue, lock, limit);
    let rows: unknown[][] = [];
    if (slots > 0) {
      const grouped = lock.group_concurrency !== null;
      const text = claimSql(grouped ? PICK_GROUPED : PICK_PLAIN, columns, lock.rate_max !== null);
      const values: unknown[] = [queue, slots, workerId];
      if (grouped) values.push(lock.group_concurrency);
      rows = (await client.query<unknown[]>({ text, values, rowMode: "array", types })).rows;
    }
    if (startsLeft === null || rows.length < startsLeft) return { rows, limited, windowOpensInMs: null };
    const opens = await client.query<{ ms: number | null }>(WINDOW_OPENS, [queue, lock.rate_per_ms]);
    return { rows, limited, windowOpensInMs: opens.rows[0]?.ms ?? null };
  });
}

const WITH_DUE_JOBS = `SELECT q.name FROM unnest($1::text[]) AS q(name)
  WHERE EXISTS (SELECT 1 FROM soniq_jobs j
    WHERE j.status = 'queued' AND j.queue = q.name AND j.scheduled_at <= now())`;

/** Which of `queues` have due queued jobs (after a short claim: those a limit held back). */
export async function withDueJobs(ctx: PgContext, queues: readonly string[]): Promise<Set<string>> {
  const res = await query<{ name: string }>(ctx, "runs.claim", {
    name: "soniq_limited_with_due_jobs",
    text: WITH_DUE_JOBS,
    values: [queues],
  });
  return new Set(res.rows.map((r) => r.name));
}
