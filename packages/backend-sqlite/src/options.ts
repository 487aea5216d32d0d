/** `sqliteBackend()` options: validated once (every problem in one error), defaults filled, frozen. */
import { SoniqError } from "@soniq/core/backend";
import type { SqliteDatabase } from "./internal/context.js";

export type SqliteBackendTarget =
  /** A path (or ":memory:"); the backend opens it and closes it in `close()`. */
  | { filename: string }
  /** An open better-sqlite3 Database; the backend never closes it. */
  | { database: SqliteDatabase };

export interface SqliteBackendOptions {
  /** How long a statement waits for another connection's write lock, in ms. Default 5000. */
  busyTimeoutMs?: number;
  /**
   * Apply the pragmas (WAL, synchronous=NORMAL, busy_timeout, foreign_keys=ON) to a Database passed as
   * `{ database }`. Default true. A Database the backend opens is always configured.
   */
  configureDatabase?: boolean;
}

export interface ResolvedOptions {
  filename: string | null;
  database: SqliteDatabase | null;
  busyTimeoutMs: number;
  configureDatabase: boolean;
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

// Every key of SqliteBackendOptions (the compiler checks none is missing or extra).
const KEYS = Object.keys({ busyTimeoutMs: true, configureDatabase: true } satisfies Record<
  keyof SqliteBackendOptions,
  true
>);

function optionProblems(options: SqliteBackendOptions): string[] {
  // A typo (or an option another version had) must not open a backend that silently lacks it.
  const problems = Object.keys(options)
    .filter((key) => !KEYS.includes(key))
    .map((key) => `no option "${key}" (it takes ${KEYS.join(", ")})`);
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  if (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    problems.push("busyTimeoutMs must be an integer >= 0");
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
  });
}
