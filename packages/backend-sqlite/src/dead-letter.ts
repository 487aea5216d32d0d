/**
 * The dead-letter move and what acts on moved rows (replay, purge).
 *
 * The move inserts into soniq_dead_letter_jobs and deletes from soniq_jobs inside one IMMEDIATE
 * transaction, the two steps wrapped in a SAVEPOINT: any failure between them (including the test-only
 * fault hook) rolls the savepoint back, so at every consistent read the job is in exactly one table.
 */
import type { DeadLetterItem, DeadLetterOptions, ReplayOptions } from "@soniq/core";
import { SoniqError } from "@soniq/core";
import { immediate, type SqliteContext } from "./context.js";
import { deadLetterConflict, invalidArgument, isUniqueViolation } from "./errors.js";
import { jsonList, jsonOrNull, msOrNull, NOW } from "./sql.js";

const DLQ_INSERT_COLUMNS = `id, job_name, args, queue, priority, max_attempts, attempts, last_error,
  dead_letter_reason, tags, resurrection_count, original_created_at, moved_to_dead_letter_at, created_at`;

const MOVE_INSERT = `INSERT INTO soniq_dead_letter_jobs (${DLQ_INSERT_COLUMNS})
  SELECT id, job_name, args, queue, priority, max_attempts, attempts, @error, @reason, @tags, 0,
    created_at, ${NOW}, ${NOW}
  FROM soniq_jobs
  WHERE id = @id AND status IN ('queued', 'processing')
    AND (@attempt IS NULL OR (status = 'processing' AND attempts = @attempt))`;

const MOVE_DELETE = "DELETE FROM soniq_jobs WHERE id = ?";

// Claimed rows whose attempts went past max_attempts: the claim already added one, take it back
// (the job did not run again) and keep the job's own last_error.
const OVER_ATTEMPTED_INSERT = `INSERT INTO soniq_dead_letter_jobs (${DLQ_INSERT_COLUMNS})
  SELECT id, job_name, args, queue, priority, max_attempts, attempts - 1, last_error,
    'max_retries_exceeded', NULL, 0, created_at, ${NOW}, ${NOW}
  FROM soniq_jobs WHERE id IN (SELECT value FROM json_each(?))`;

const OVER_ATTEMPTED_DELETE = "DELETE FROM soniq_jobs WHERE id IN (SELECT value FROM json_each(?))";

export class InjectedFault extends Error {
  constructor(id: string) {
    super(`injected fault: dead-letter move of ${id} broken between insert and delete`);
    this.name = "InjectedFault";
  }
}

function validateDeadLetter(id: string, options: DeadLetterOptions): void {
  if (typeof options.reason !== "string" || options.reason.length === 0) {
    throw invalidArgument("markJobDeadLetter needs a non-empty reason.", { id });
  }
  if (options.attempt !== undefined && !Number.isInteger(options.attempt)) {
    throw invalidArgument("markJobDeadLetter attempt must be an integer.", { id, attempt: options.attempt });
  }
}

/** Move one job; false when there is no such movable job (or the attempt fence does not match). */
export function markJobDeadLetter(ctx: SqliteContext, id: string, options: DeadLetterOptions): boolean {
  validateDeadLetter(id, options);
  const params = {
    id,
    reason: options.reason,
    error: options.error ?? null,
    tags: jsonOrNull(options.tags, "tags"),
    attempt: options.attempt ?? null,
  };
  const moveSteps = () => {
    const inserted = ctx.statement(MOVE_INSERT).run(params).changes;
    if (inserted === 0) return false;
    if (ctx.faults.breakDeadLetterMove?.(id)) throw new InjectedFault(id);
    ctx.statement(MOVE_DELETE).run(id);
    return true;
  };
  try {
    // The nested transaction is a SAVEPOINT: a throw between the steps rolls back to it.
    return immediate(ctx, () => ctx.db.transaction(moveSteps)());
  } catch (err) {
    if (isUniqueViolation(err)) throw deadLetterConflict(id, err);
    if (err instanceof InjectedFault) {
      throw new SoniqError("SONIQ_BACKEND_ERROR", err.message, { context: { id }, cause: err });
    }
    throw err;
  }
}

const HAS_DEAD_LETTER_ROW = "SELECT 1 FROM soniq_dead_letter_jobs WHERE id = ?";

/**
 * The worker's batched, fenced moves in one IMMEDIATE transaction with the move's prepared statements.
 * An item whose job is not processing under its attempt, or whose id already has a dead-letter row, is
 * skipped (nothing of it changes); the others move. A failure (the test-only fault included) rolls the
 * whole transaction back, so nothing of the batch moved. Returns the ids that moved.
 */
export function markJobsDeadLetter(ctx: SqliteContext, items: readonly DeadLetterItem[]): string[] {
  for (const item of items) validateDeadLetter(item.id, item);
  return immediate(ctx, () => {
    const moved: string[] = [];
    for (const item of items) {
      if (ctx.statement(HAS_DEAD_LETTER_ROW).get(item.id) !== undefined) continue;
      const inserted = ctx.statement(MOVE_INSERT).run({
        id: item.id,
        reason: item.reason,
        error: item.error ?? null,
        tags: jsonOrNull(item.tags, "tags"),
        attempt: item.attempt,
      }).changes;
      if (inserted === 0) continue;
      if (ctx.faults.breakDeadLetterMove?.(item.id)) {
        throw new SoniqError("SONIQ_BACKEND_ERROR", new InjectedFault(item.id).message, {
          context: { id: item.id },
        });
      }
      ctx.statement(MOVE_DELETE).run(item.id);
      moved.push(item.id);
    }
    return moved;
  });
}

/** Inside the claim's transaction: move rows the claim found over their attempt budget. */
export function moveOverAttemptedJobs(ctx: SqliteContext, ids: readonly string[]): void {
  const list = jsonList(ids);
  try {
    ctx.statement(OVER_ATTEMPTED_INSERT).run(list);
  } catch (err) {
    if (isUniqueViolation(err)) throw deadLetterConflict(ids.join(", "), err);
    throw err;
  }
  ctx.statement(OVER_ATTEMPTED_DELETE).run(list);
}

const REPLAY_INSERT = `INSERT INTO soniq_jobs (id, job_name, args, status, attempts, max_attempts, queue,
    priority, unique_job, scheduled_at, created_at, updated_at)
  SELECT @newId, job_name, args, 'queued', 0, max_attempts, COALESCE(@queue, queue),
    COALESCE(@priority, priority), 0, COALESCE(@scheduledAt, ${NOW}), ${NOW}, ${NOW}
  FROM soniq_dead_letter_jobs WHERE id = @id
  RETURNING queue`;

const REPLAY_BUMP = `UPDATE soniq_dead_letter_jobs
  SET resurrection_count = resurrection_count + 1, last_resurrection_at = ${NOW}
  WHERE id = ?`;

/** Mint a fresh queued job from a dead-letter row and count the resurrection, in one transaction. */
export function replayDeadLetterJob(ctx: SqliteContext, id: string, options: ReplayOptions): string | null {
  if (typeof options.newId !== "string" || options.newId.length === 0) {
    throw invalidArgument("replayDeadLetterJob needs a newId.", { id });
  }
  const row = immediate(ctx, () => {
    const inserted = ctx.statement(REPLAY_INSERT).get({
      id,
      newId: options.newId,
      queue: options.queue ?? null,
      priority: options.priority ?? null,
      scheduledAt: msOrNull(options.scheduledAt),
    }) as { queue: string } | undefined;
    if (inserted) ctx.statement(REPLAY_BUMP).run(id);
    return inserted;
  });
  if (!row) return null;
  ctx.notify(row.queue);
  return options.newId;
}

export function purgeDeadLetterJob(ctx: SqliteContext, id: string): boolean {
  return ctx.statement("DELETE FROM soniq_dead_letter_jobs WHERE id = ?").run(id).changes > 0;
}
