/**
 * Driver errors to `SoniqError`s. better-sqlite3 throws `SqliteError` (with a `code` such as
 * `SQLITE_CONSTRAINT_TRIGGER`); drizzle wraps it in `err.cause` when the query went through `db.run(sql)`.
 */
import { isSoniqError, SoniqError } from "@soniq/core/backend";

interface SqliteLikeError {
  code: string;
  message: string;
}

/** The SqliteError in `err` or its `cause` chain, if any. */
export function findSqliteError(err: unknown): SqliteLikeError | null {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && typeof current === "object" && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && code.startsWith("SQLITE_")) {
      return { code, message: String((current as { message?: unknown }).message ?? "") };
    }
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

/**
 * Translate what SQLite threw into the contract's error codes. SoniqErrors pass through; errors that
 * are not from SQLite (programming errors) are returned unchanged.
 */
export function translateError(err: unknown, operation: string): unknown {
  if (isSoniqError(err)) return err;
  const sqlite = findSqliteError(err);
  if (!sqlite) return err;
  const context = { operation, sqliteCode: sqlite.code };
  if (sqlite.code === "SQLITE_CONSTRAINT_TRIGGER" || sqlite.code === "SQLITE_CONSTRAINT_CHECK") {
    return new SoniqError(
      "SONIQ_INVALID_STATUS_TRANSITION",
      `${operation} was rejected by the database: ${sqlite.message}. A job's status is one of queued, ` +
        "processing, done, cancelled; dead-lettered jobs live in soniq_dead_letter_jobs, and done or cancelled jobs never change status.",
      { context, cause: err },
    );
  }
  if (sqlite.message.includes("no such table")) {
    return new SoniqError(
      "SONIQ_BACKEND_ERROR",
      `${operation} failed: ${sqlite.message}. The schema is missing: run soniq.setup() (backend.migrations.apply()) first.`,
      { context, cause: err },
    );
  }
  return new SoniqError("SONIQ_BACKEND_ERROR", `${operation} failed in SQLite: ${sqlite.message}`, {
    context,
    cause: err,
  });
}

export function invalidArgument(message: string, context: Record<string, unknown>): SoniqError {
  return new SoniqError("SONIQ_INVALID_ARGUMENT", message, { context });
}
