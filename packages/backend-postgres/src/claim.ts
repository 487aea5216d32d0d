/**
 * Claim: one statement takes up to `limit` due queued jobs in priority, scheduled_at, created_at order,
 * skipping rows other claimers hold (FOR UPDATE SKIP LOCKED), marks them processing, bumps attempts and
 * stamps the worker.
 *
 * `id = ANY(ARRAY(subquery))` rather than `id IN (subquery)`: with table statistics the planner turned the
 * IN form into a whole-table scan (DESIGN.md section 11); the ARRAY form keeps the index path.
 * One named statement per queue shape, because `queue = $3` lets the fetch index deliver rows already in
 * priority order while `queue = ANY($3)` makes Postgres sort.
 *
 * The claim commits asynchronously (`set_config('synchronous_commit', 'off', true)`, local to the claim's own
 * implicit transaction, so the session keeps its setting). It skips the WAL flush wait, the largest fixed cost
 * of a small claim, and gives up nothing a job relies on: only a database crash can lose a claim (within
 * ~3 x wal_writer_delay), and then the job is simply queued again, which at-least-once delivery allows. Every
 * later synchronous commit (a completion, a retry, a dead-letter move) flushes the WAL up to itself, so a
 * durable outcome always implies its durable claim.
 *
 * Only a registered worker may claim. `soniq_jobs.worker_id` has no foreign key (its check cost a lookup and
 * a row lock per claimed row), so the statement checks the registration once (an uncorrelated EXISTS, a
 * one-time filter) and claims nothing for an unknown worker; an empty claim then asks which case it was.
 */
import type { ClaimRequest, Job } from "@soniq/core";
import { SoniqError } from "@soniq/core";
import { CLAIM_COLUMNS, CLAIM_TYPES, mapClaimedRow } from "./claim-rows.js";
import { ASYNC_COMMIT, type PgContext, query } from "./context.js";
import { moveExhaustedJobs } from "./dead-letter.js";

function claimSql(queueFilter: string): string {
  return `UPDATE soniq_jobs
SET status = 'processing', attempts = attempts + 1, worker_id = $2, updated_at = now()
FROM ${ASYNC_COMMIT}
WHERE id = ANY(ARRAY(
  SELECT id FROM soniq_jobs
  WHERE status = 'queued' AND scheduled_at <= now()${queueFilter}
    AND ($2::uuid IS NULL OR EXISTS (SELECT 1 FROM soniq_workers w WHERE w.id = $2::uuid))
  ORDER BY priority, scheduled_at, created_at
  LIMIT $1
  FOR UPDATE SKIP LOCKED))
RETURNING ${CLAIM_COLUMNS}`;
}

const CLAIM_ANY_QUEUE = claimSql("");
const CLAIM_ONE_QUEUE = claimSql(" AND queue = $3");
const CLAIM_SOME_QUEUES = claimSql(" AND queue = ANY($3::text[])");

function validate(request: ClaimRequest): void {
  if (!Number.isSafeInteger(request.limit) || request.limit < 1) {
    throw new SoniqError("SONIQ_INVALID_ARGUMENT", "claim(): limit must be an integer >= 1.", {
      context: { limit: request.limit },
    });
  }
}

function statementFor(request: ClaimRequest) {
  const base = [request.limit, request.workerId];
  const shape = { rowMode: "array" as const, types: CLAIM_TYPES };
  const queues = request.queues;
  if (queues === null) return { name: "soniq_claim_any", text: CLAIM_ANY_QUEUE, values: base, ...shape };
  if (queues.length === 1) {
    return { name: "soniq_claim_one", text: CLAIM_ONE_QUEUE, values: [...base, queues[0]], ...shape };
  }
  return { name: "soniq_claim_some", text: CLAIM_SOME_QUEUES, values: [...base, [...queues]], ...shape };
}

async function requireRegistered(ctx: PgContext, workerId: string): Promise<void> {
  const res = await query(ctx, "claim", {
    name: "soniq_worker_registered",
    text: "SELECT 1 FROM soniq_workers WHERE id = $1::uuid",
    values: [workerId],
  });
  if (res.rows.length > 0) return;
  throw new SoniqError(
    "SONIQ_INVALID_ARGUMENT",
    "claim: the worker id is not registered; call registerWorker() before claiming with it.",
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

export async function claim(ctx: PgContext, request: ClaimRequest): Promise<Job[]> {
  validate(request);
  if (request.queues !== null && request.queues.length === 0) return [];
  const res = await query<unknown[]>(ctx, "claim", statementFor(request));
  if (res.rows.length === 0) {
    if (request.workerId !== null) await requireRegistered(ctx, request.workerId);
    return [];
  }
  const workerId = request.workerId;
  const jobs = res.rows.map((row) => mapClaimedRow(row, workerId));
  // Rare path: a job whose workers kept dying before they could record a failure. It must not run again.
  const exhausted = jobs.filter((job) => job.attempts > job.maxAttempts);
  if (exhausted.length === 0) return jobs.sort(byClaimOrder);
  await moveExhaustedJobs(ctx, exhausted);
  return jobs.filter((job) => job.attempts <= job.maxAttempts).sort(byClaimOrder);
}
