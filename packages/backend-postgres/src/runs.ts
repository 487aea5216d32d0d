/**
 * The worker's hot path: `claim` and `settle`.
 *
 * Claim: one statement takes up to `limit` due queued jobs in priority, scheduled_at, created_at order,
 * skipping rows other claimers hold (FOR UPDATE SKIP LOCKED), marks them processing, bumps attempts and
 * stamps the worker. It returns every row it took, including one whose attempts now exceed max_attempts
 * (core dead-letters those through settle), so a short result means nothing more is due. A claim that covers
 * a limited queue takes the limited path instead (internal/queue-limits.ts): core's limited-claim program decides
 * what it takes, in the same order, and whether a limit held due jobs back (`capped`).
 *
 * `id = ANY(ARRAY(subquery))` rather than `id IN (subquery)`: with table statistics the planner turned the
 * IN form into a whole-table scan (DESIGN.md section 12); the ARRAY form keeps the index path.
 * One statement per queue shape, because `queue = $3` lets the fetch index deliver rows already in
 * priority order while `queue = ANY($3)` makes Postgres sort.
 *
 * A claim of every queue or of one queue calls a function (`soniq_claim_any`, `soniq_claim_queue`, migration
 * 0016), planned once per connection: planning the statement cost more than running it (0.3-0.5 ms a claim, most
 * of a pickup's database time). A prepared statement's generic plan alone was not safe: fixed while a worker's
 * first claims met a small table, on a table never analyzed or vacuumed (a fresh database, autovacuum off) it
 * read every queued row (a bitmap scan and a sort, or a sequential scan for the outer UPDATE's ids) as the table
 * grew, and steady arrival at 2,000 jobs/s fell 1.4 s behind (bench W7; test/claim-plan-growth.test.ts). The
 * functions switch sequential scans, bitmap scans and sorts off for their own statement, so any plan of it is
 * the ordered read of the fetch index that stops at the limit, whatever the table's size or statistics.
 * A claim of several queues (`queue = ANY(...)`, which the fetch index cannot deliver in order) stays one
 * statement planned at every call (unnamed), where `LIMIT (SELECT $1::int)` keeps the limit's value from the
 * planner: it plans for an early stop, not for a limit above its row estimate, which without statistics made
 * it sort every queued row on a large backlog.
 *
 * The claim commits asynchronously (`set_config('synchronous_commit', 'off', true)`, local to the claim's own
 * implicit transaction, so the session keeps its setting). It skips the WAL flush wait, the largest fixed cost
 * of a small claim, and gives up nothing a job relies on: only a database crash can lose a claim (within
 * ~3 x wal_writer_delay), and then the job is simply queued again, which at-least-once delivery allows. Every
 * later synchronous commit (a settle) flushes the WAL up to itself, so a durable outcome always implies its
 * durable claim.
 *
 * Only a registered worker may claim. `soniq_jobs.worker_id` has no foreign key (its check cost a lookup and
 * a row lock per claimed row), so the statement checks the registration once (an uncorrelated EXISTS, a
 * one-time filter) and claims nothing for an unknown worker; an empty claim then asks which case it was.
 *
 * Settle: one statement for any mix of outcomes (internal/settle-sql.ts).
 */
import {
  type ClaimRequest,
  type ClaimResult,
  claimQueues,
  type Job,
  type ProgressUpdate,
  type RunsFacet,
  type Settlement,
  SoniqError,
} from "@soniq/core/backend";
import { CLAIM_COLUMNS, CLAIM_TYPES, mapClaimedRow } from "./internal/claim-rows.js";
import { ASYNC_COMMIT, type PgContext, query } from "./internal/context.js";
import { isQueuedKeyConflict } from "./internal/errors.js";
import { CONTROLLED, claimWithLimits } from "./internal/queue-limits.js";
import { CLEAR_KEYS, KEEP_KEYS, requeueQuery } from "./internal/requeue-keys.js";
import {
  type EncodedSettle,
  encodeSettle,
  SETTLE_PARTS,
  type SettlePart,
  settledFlags,
  settleSql,
} from "./internal/settle-sql.js";
import { settleEncoded } from "./internal/settle-tx.js";
import { inTransaction } from "./internal/tx.js";

export function runsFacet(ctx: PgContext): RunsFacet {
  return {
    claim: (request) => claim(ctx, request),
    settle: (items, workerId) => settle(ctx, items, workerId),
    reportProgress: (updates, workerId) => reportProgress(ctx, updates, workerId),
  };
}

/**
 * Every run's latest progress in one statement, fenced by (id, attempt) and, when $3 names one, the worker,
 * not by status (a run that just settled still gets its last value; a done row keeps its worker). $1 is an
 * object keyed by id: [attempt, value].
 */
const REPORT_PROGRESS = `UPDATE soniq_jobs SET progress = $1::jsonb -> id::text -> 1
WHERE id = ANY($2::uuid[]) AND attempts = ($1::jsonb -> id::text ->> 0)::int
  AND ($3::uuid IS NULL OR worker_id = $3::uuid)`;

async function reportProgress(
  ctx: PgContext,
  updates: readonly ProgressUpdate[],
  workerId: string | undefined,
): Promise<number> {
  if (updates.length === 0) return 0;
  const byId: Record<string, [number, unknown]> = {};
  for (const u of updates) byId[u.id] = [u.attempt, u.value ?? null];
  const res = await query(ctx, "runs.reportProgress", {
    name: "soniq_report_progress",
    text: REPORT_PROGRESS,
    values: [JSON.stringify(byId), Object.keys(byId), workerId ?? null],
  });
  return res.rowCount ?? 0;
}

function claimSql(queueFilter: string, controlFilter: string): string {
  return `UPDATE soniq_jobs
SET status = 'processing', attempts = attempts + 1, worker_id = $2, updated_at = now()
FROM ${ASYNC_COMMIT}
WHERE id = ANY(ARRAY(
  SELECT id FROM soniq_jobs
  WHERE status = 'queued' AND scheduled_at <= now()${queueFilter}
    AND ($2::uuid IS NULL OR EXISTS (SELECT 1 FROM soniq_workers w WHERE w.id = $2::uuid))
    ${controlFilter}
  ORDER BY priority, scheduled_at, created_at
  LIMIT (SELECT $1::int)
  FOR UPDATE SKIP LOCKED))
RETURNING ${CLAIM_COLUMNS}`;
}

// Paused and limited queues are left out (internal/queue-limits.ts): for one queue by a one-time filter,
// for several by the list of controlled queues, read once per statement. The test is wrapped in COALESCE
// (a no-op: queue names are never NULL) so the planner cannot estimate it from the column statistics: on a
// table whose jobs are all in one queue, `queue <> x` for an unknown x is estimated to match no row, and
// the planner then sorted every queued row on every claim instead of reading the fetch index in order
// (test/claim-plan.test.ts, "one queue").
const SKIP_CONTROLLED = `AND COALESCE(queue <> ALL(ARRAY(SELECT q.name FROM soniq_queues q WHERE ${CONTROLLED})), true)`;
// The functions' own statements (migration 0016) are this one with `queue = p_queue` or no queue filter, and
// `CONTROLLED` written out: a change to either is a new migration that replaces them.
const CLAIM_ANY_QUEUE = `SELECT ${CLAIM_COLUMNS} FROM soniq_claim_any($1::int, $2::uuid)`;
const CLAIM_ONE_QUEUE = `SELECT ${CLAIM_COLUMNS} FROM soniq_claim_queue($1::int, $2::uuid, $3::text)`;
const CLAIM_SOME_QUEUES = claimSql(" AND queue = ANY($3::text[])", SKIP_CONTROLLED);

function claimStatement(request: ClaimRequest) {
  const base = [request.limit, request.workerId];
  const shape = { rowMode: "array" as const, types: CLAIM_TYPES };
  const queues = request.queues;
  if (queues === null) return { name: "soniq_claim_any", text: CLAIM_ANY_QUEUE, values: base, ...shape };
  if (queues.length === 1) {
    return { name: "soniq_claim_queue", text: CLAIM_ONE_QUEUE, values: [...base, queues[0]], ...shape };
  }
  // No `name`: planned at every call (see the file comment).
  return { text: CLAIM_SOME_QUEUES, values: [...base, [...queues]], ...shape };
}

async function requireRegistered(ctx: PgContext, workerId: string): Promise<void> {
  const res = await query(ctx, "runs.claim", {
    name: "soniq_worker_registered",
    text: "SELECT 1 FROM soniq_workers WHERE id = $1::uuid",
    values: [workerId],
  });
  if (res.rows.length > 0) return;
  throw new SoniqError(
    "SONIQ_INVALID_ARGUMENT",
    "claim: the worker id is not registered; call workers.register() before claiming with it.",
    { context: { workerId } },
  );
}

function byClaimOrder(a: Job, b: Job): number {
  return (
    a.priority - b.priority ||
    a.scheduledAt.getTime() - b.scheduledAt.getTime() ||
    a.createdAt.getTime() - b.createdAt.getTime()
  );
}

/**
 * Without a limited queue in the claim, one statement (paused and limited queues left out in SQL). With
 * one, the limited path (internal/queue-limits.ts), where core decides what to take.
 */
async function claim(ctx: PgContext, request: ClaimRequest): Promise<ClaimResult> {
  const { open, limited } = claimQueues(request.queues, await ctx.limits.controls(ctx));
  let result: ClaimResult;
  if (limited.length > 0) {
    result = await claimWithLimits(ctx, request, open, limited);
  } else {
    const rows = (await query<unknown[]>(ctx, "runs.claim", claimStatement(request))).rows;
    // UPDATE ... RETURNING gives no order; the caller runs jobs in claim order.
    const jobs = rows.map((row) => mapClaimedRow(row, request.workerId)).sort(byClaimOrder);
    result = { jobs, capped: null };
  }
  if (result.jobs.length === 0 && request.workerId !== null) await requireRegistered(ctx, request.workerId);
  return result;
}

function settleName(parts: readonly SettlePart[], asyncCommit: boolean): string {
  return `soniq_settle_${parts.join("_")}${asyncCommit ? "_async" : ""}`;
}

/** The hot-path text of every combination of parts (15 per commit mode), each a named statement. */
const SETTLE_STATEMENTS: ReadonlyMap<string, string> = new Map(
  Array.from({ length: 2 ** SETTLE_PARTS.length - 1 }, (_, i) =>
    SETTLE_PARTS.filter((_, bit) => ((i + 1) >> bit) & 1),
  ).flatMap((parts) =>
    [false, true].map((asyncCommit): [string, string] => [
      settleName(parts, asyncCommit),
      settleSql(parts, asyncCommit, KEEP_KEYS),
    ]),
  ),
);

async function settleOnPool(ctx: PgContext, encoded: EncodedSettle): Promise<unknown[][]> {
  if (encoded.outbox) {
    // Webhook deliveries ride along: the outbox CTE joins the statement (unnamed; off the hot path).
    const res = await requeueQuery<unknown[]>(ctx, "runs.settle", (keys) => ({
      text: settleSql(encoded.parts, ctx.asyncOutcomes, keys, true),
      values: encoded.values,
      rowMode: "array",
    }));
    return res.rows;
  }
  const name = settleName(encoded.parts, ctx.asyncOutcomes);
  const text = SETTLE_STATEMENTS.get(name) ?? settleSql(encoded.parts, ctx.asyncOutcomes, KEEP_KEYS);
  const res = await requeueQuery<unknown[]>(ctx, "runs.settle", (keys, isHot) => ({
    ...(isHot ? { name, text } : { text: settleSql(encoded.parts, ctx.asyncOutcomes, keys) }),
    values: encoded.values,
    rowMode: "array",
  }));
  return res.rows;
}

async function settle(ctx: PgContext, items: readonly Settlement[], workerId?: string): Promise<boolean[]> {
  if (items.length === 0) return [];
  const encoded = encodeSettle(items, workerId);
  if (items.some((item) => item.kind !== "requeue" && item.flow !== undefined)) {
    return settleWithFlows(ctx, items, encoded);
  }
  return settledFlags(items, encoded, await settleOnPool(ctx, encoded));
}

/**
 * A batch holding flow steps' outcomes: the same statement, then core's `settleFlows` program (each applied
 * step's done, added steps, releases), in one transaction, so a crash never loses or doubles a release. Flows
 * are taken in id order (two batches lock shared flow rows in the same order), each flow's steps together
 * (a handful of statements per flow, whatever the batch holds). A queued-key conflict of a requeue item runs the
 * whole transaction again with the keys cleared, as the plain path does.
 */
async function settleWithFlows(ctx: PgContext, items: readonly Settlement[], encoded: EncodedSettle) {
  const forms = [KEEP_KEYS, CLEAR_KEYS];
  for (let i = 0; ; i++) {
    try {
      return await inTransaction(ctx, "runs.settle", (client) =>
        settleEncoded(ctx, client, items, encoded, forms[i] ?? CLEAR_KEYS),
      );
    } catch (err) {
      if (i >= forms.length - 1 || !isQueuedKeyConflict(err)) throw err;
    }
  }
}
