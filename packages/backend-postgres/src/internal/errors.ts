/**
 * Translate node-postgres errors (bare, or wrapped by drizzle in `err.cause`) into `SoniqError` codes,
 * so callers recognise failures by code whatever driver layer raised them.
 */
import { isSoniqError, SoniqError } from "@soniq/core/backend";

/** The fields of a pg `DatabaseError` this backend reads. */
export interface PgErrorFields {
  code: string;
  constraint?: string;
  message: string;
}

/** The pg error in `err` or in its `cause` chain (drizzle wraps driver errors in `DrizzleQueryError`). */
export function findPgError(err: unknown): PgErrorFields | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && typeof current === "object" && current !== null; depth++) {
    const candidate = current as { code?: unknown; message?: unknown; cause?: unknown };
    // SQLSTATEs are five characters; Node's system errors (ECONNREFUSED) are not.
    if (typeof candidate.code === "string" && /^[0-9A-Z]{5}$/.test(candidate.code)) {
      return current as PgErrorFields;
    }
    current = candidate.cause;
  }
  return undefined;
}

/** SQLSTATE of `err`, if it carries one. */
export function sqlState(err: unknown): string | undefined {
  return findPgError(err)?.code;
}

const STATUS_CONSTRAINTS = new Set(["soniq_jobs_status_check", "soniq_jobs_terminal_status"]);

/** Map any error raised by a database call to a `SoniqError` (a `SoniqError` passes through). */
export function translatePgError(err: unknown, operation: string, context: Record<string, unknown> = {}) {
  if (isSoniqError(err)) return err;
  const pgError = findPgError(err);
  const ctx = { operation, ...context, sqlState: pgError?.code, constraint: pgError?.constraint };
  if (pgError?.code === "23514" && pgError.constraint && STATUS_CONSTRAINTS.has(pgError.constraint)) {
    return new SoniqError(
      "SONIQ_INVALID_STATUS_TRANSITION",
      `${operation}: the database refused the status change (${pgError.message}). A job's status is one of queued, processing, done, cancelled, and done or cancelled jobs never change status; dead-lettered jobs live in soniq_dead_letter_jobs.`,
      { context: ctx, cause: err },
    );
  }
  if (pgError?.code === "23505" && pgError.constraint === "soniq_dead_letter_jobs_pkey") {
    return new SoniqError(
      "SONIQ_DEAD_LETTER_CONFLICT",
      `${operation}: soniq_dead_letter_jobs already holds a row with this job's id; the statement changed nothing. Purge or inspect that row first.`,
      { context: ctx, cause: err },
    );
  }
  if (pgError?.code === "23505" && pgError.constraint === "soniq_jobs_pkey") {
    // Core mints a fresh id for every job: a clash is a caller passing one twice (bad input, not a fault).
    return new SoniqError(
      "SONIQ_INVALID_ARGUMENT",
      `${operation}: a job with this id already exists; every enqueue needs a fresh id. Nothing was written.`,
      { context: ctx, cause: err },
    );
  }
  const message = err instanceof Error ? err.message : String(err);
  return new SoniqError("SONIQ_BACKEND_ERROR", `${operation} failed in PostgreSQL: ${message}`, {
    context: ctx,
    cause: err,
  });
}

/**
 * A write hit one of the partial unique indexes (a queued row already holds the dedup key, or the
 * name + args of a unique job).
 */
export function isQueuedKeyConflict(err: unknown): boolean {
  const pgError = findPgError(err);
  return (
    pgError?.code === "23505" &&
    (pgError.constraint === "idx_soniq_jobs_unique_queued" ||
      pgError.constraint === "idx_soniq_jobs_dedup_key")
  );
}
