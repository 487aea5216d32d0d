/** `sqliteBackend()` options: validated once (every problem in one error), defaults filled, frozen. */
import { SoniqError } from "@soniq/core/backend";
import type { SqliteDatabase } from "./internal/context.js";

export type SqliteBackendTarget =
  /** A path (or ":memory:"); the backend opens it and closes it in `close()`. */
  | { filename: string }
  /** An open better-sqlite3 Database; the backend never closes it. */
  | { database: SqliteDatabase };

/** Fault injection for the conformance kit. Never set it in production. */
export interface SqliteTestHooks {
  /**
   * Consulted in `runs.settle` for each dead-letter move, after the insert into soniq_dead_letter_jobs
   * and before the delete from soniq_jobs. Returning true fails the move there: the settle call's
   * transaction rolls back and the call rejects, nothing changed. Given, it adds a SQL function and a
   * temporary trigger (`soniq_interrupt_dead_letter_move`) to the backend's connection.
   */
  interruptDeadLetterMove?: (jobId: string) => boolean;
}

export interface SqliteBackendOptions {
  /** How long a statement waits for another connection's write lock, in ms. Default 5000. */
  busyTimeoutMs?: number;
  /**
   * Apply the pragmas (WAL, synchronous=NORMAL, busy_timeout, foreign_keys=ON) to a Database passed as
   * `{ database }`. Default true. A Database the backend opens is always configured.
   */
  configureDatabase?: boolean;
  /** Fault injection for conformance tests (see `SqliteTestHooks`). Never set it in production. */
  testHooks?: SqliteTestHooks;
}

export interface ResolvedOptions {
  filename: string | null;
  database: SqliteDatabase | null;
  busyTimeoutMs: number;
  configureDatabase: boolean;
  testHooks: SqliteTestHooks;
}

function isDatabase(value: unknown): value is SqliteDatabase {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { prepare?: unknown }).prepare === "function"
  );
}

function targetProblems(t: { filename?: unknown; database?: unknown }): string[] {
  const problems: string[] = [];
  const hasFile = t.filename !== undefined;
  const hasDb = t.database !== undefined;
  if (hasFile === hasDb) problems.push("pass exactly one of { filename } or { database }");
  if (hasFile && (typeof t.filename !== "string" || t.filename.length === 0)) {
    problems.push("filename must be a non-empty string");
  }
  if (hasDb && !isDatabase(t.database)) problems.push("database must be a better-sqlite3 Database");
  if (hasDb && isDatabase(t.database) && !t.database.open) problems.push("database is closed");
  return problems;
}

function optionProblems(options: SqliteBackendOptions): string[] {
  const problems: string[] = [];
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  if (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    problems.push("busyTimeoutMs must be an integer >= 0");
  }
  const hooks = (options as { testHooks?: unknown }).testHooks;
  if (hooks !== undefined) {
    if (typeof hooks !== "object" || hooks === null) {
      problems.push("testHooks must be an object");
    } else {
      const interrupt = (hooks as { interruptDeadLetterMove?: unknown }).interruptDeadLetterMove;
      if (interrupt !== undefined && typeof interrupt !== "function") {
        problems.push("testHooks.interruptDeadLetterMove must be a function");
      }
    }
  }
  return problems;
}

export function resolveOptions(target: SqliteBackendTarget, options: SqliteBackendOptions): ResolvedOptions {
  const t = (target ?? {}) as { filename?: unknown; database?: unknown };
  const problems = [...targetProblems(t), ...optionProblems(options ?? {})];
  if (problems.length > 0) {
    throw new SoniqError("SONIQ_INVALID_OPTIONS", `Invalid sqliteBackend options: ${problems.join("; ")}.`, {
      context: { problems },
    });
  }
  return Object.freeze({
    filename: t.filename !== undefined ? (t.filename as string) : null,
    database: t.database !== undefined ? (t.database as SqliteDatabase) : null,
    busyTimeoutMs: options.busyTimeoutMs ?? 5000,
    configureDatabase: options.configureDatabase ?? true,
    testHooks: Object.freeze({ ...options.testHooks }),
  });
}
