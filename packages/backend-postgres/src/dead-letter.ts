/**
 * The dead-letter move: the job row leaves soniq_jobs and lands in soniq_dead_letter_jobs atomically.
 * Production path: one data-modifying CTE (DELETE ... RETURNING feeding the INSERT), so it is one
 * statement, one transaction and one round trip. If the INSERT fails (a dead-letter row with the same id
 * exists), the whole statement fails and the DELETE never happened.
 *
 * When the test-only hook `interruptDeadLetterMove` asks for it, one move runs as two statements in one
 * explicit transaction on a dedicated connection with the hook's function between them, so the kit can
 * kill the connection mid-move. Every other move, in tests too, takes the single-statement path.
 */
import type { DeadLetterOptions, Job } from "@soniq/core";
import { ASYNC_COMMIT, type DeadLetterInterrupt, type PgContext, query } from "./context.js";
import { isUuid } from "./errors.js";
import { inDedicatedTransaction } from "./interrupted-move.js";

const DLQ_INSERT_COLUMNS =
  "id, job_name, args, queue, priority, max_attempts, attempts, last_error, dead_letter_reason, tags, original_created_at";

function movableWhere(fenced: boolean): string {
  return fenced
    ? "id = $1 AND status = 'processing' AND attempts = $5"
    : "id = $1 AND status IN ('queued', 'processing')";
}

function moveSql(fenced: boolean, asyncCommit: boolean): string {
  return `WITH moved AS (
  DELETE FROM soniq_jobs ${asyncCommit ? `USING ${ASYNC_COMMIT}` : ""} WHERE ${movableWhere(fenced)}
  RETURNING id, job_name, args, queue, priority, max_attempts, attempts, created_at)
INSERT INTO soniq_dead_letter_jobs (${DLQ_INSERT_COLUMNS})
SELECT id, job_name, args, queue, priority, max_attempts, attempts, $2, $3, $4::jsonb, created_at FROM moved
RETURNING id`;
}

const MOVES = {
  plain: moveSql(false, false),
  fenced: moveSql(true, false),
  plainAsync: moveSql(false, true),
  fencedAsync: moveSql(true, true),
} as const;

function moveValues(id: string, options: DeadLetterOptions): unknown[] {
  const tags = options.tags === undefined || options.tags === null ? null : JSON.stringify(options.tags);
  const values: unknown[] = [id, options.error, options.reason, tags];
  if (options.attempt !== undefined) values.push(options.attempt);
  return values;
}

export async function markJobDeadLetter(
  ctx: PgContext,
  id: string,
  options: DeadLetterOptions,
): Promise<boolean> {
  if (!isUuid(id)) return false;
  const interrupt = ctx.testHooks.interruptDeadLetterMove?.();
  if (interrupt) return moveInTwoSteps(ctx, id, options, interrupt);
  const variant =
    `${options.attempt !== undefined ? "fenced" : "plain"}${ctx.asyncOutcomes ? "Async" : ""}` as const;
  const res = await query(ctx, "markJobDeadLetter", {
    name: `soniq_dlq_move_${variant}`,
    text: MOVES[variant],
    values: moveValues(id, options),
  });
  return res.rowCount === 1;
}

function moveInTwoSteps(
  ctx: PgContext,
  id: string,
  options: DeadLetterOptions,
  interrupt: DeadLetterInterrupt,
): Promise<boolean> {
  const fenced = options.attempt !== undefined;
  return inDedicatedTransaction(ctx, "markJobDeadLetter", id, async (client, pid) => {
    const copied = await client.query(
      `INSERT INTO soniq_dead_letter_jobs (${DLQ_INSERT_COLUMNS})
       SELECT id, job_name, args, queue, priority, max_attempts, attempts, $2, $3, $4::jsonb, created_at
       FROM soniq_jobs WHERE ${movableWhere(fenced)} FOR UPDATE RETURNING id`,
      moveValues(id, options),
    );
    if (copied.rowCount !== 1) {
      await client.query("ROLLBACK");
      return false;
    }
    await interrupt(id, { pid });
    await client.query("DELETE FROM soniq_jobs WHERE id = $1", [id]);
    await client.query("COMMIT");
    return true;
  });
}

const MOVE_EXHAUSTED = `WITH moved AS (
  DELETE FROM soniq_jobs j USING unnest($1::uuid[], $2::int[]) AS x(id, attempt)
  WHERE j.id = x.id AND j.status = 'processing' AND j.attempts = x.attempt
  RETURNING j.id, j.job_name, j.args, j.queue, j.priority, j.max_attempts, j.attempts, j.last_error, j.created_at)
INSERT INTO soniq_dead_letter_jobs (${DLQ_INSERT_COLUMNS})
SELECT id, job_name, args, queue, priority, max_attempts, attempts - 1, last_error, 'max_retries_exceeded', NULL,
       created_at
FROM moved`;

/**
 * Dead-letter jobs the claim just took although their attempts already exceed max_attempts. `attempts` is
 * recorded as the runs that actually started (the claim's increment is not a run). A failure here must not
 * fail the claim (the other claimed jobs are already processing): the rows stay processing and stale-worker
 * recovery hands them back.
 */
export async function moveExhaustedJobs(ctx: PgContext, jobs: readonly Job[]): Promise<void> {
  try {
    await query(ctx, "claim (dead-letter exhausted jobs)", {
      name: "soniq_dlq_move_exhausted",
      text: MOVE_EXHAUSTED,
      values: [jobs.map((j) => j.id), jobs.map((j) => j.attempts)],
    });
  } catch {
    // See the docblock: leaving the rows processing is the safe outcome.
  }
}
