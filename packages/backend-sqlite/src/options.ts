/** `sqliteBackend()` options: validated once (every problem in one error), defaults filled, frozen. */
import { SoniqError } from "@soniq/core";
import type { SqliteDatabase, SqliteFaults } from "./context.js";
import { migrationsFolder } from "./migrate.js";

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
  /** Internal, for the conformance kit's fault injection. Not a stable API. */
  faults?: SqliteFaults;
}

export interface ResolvedOptions {
  filename: string | null;
  database: SqliteDatabase | null;
  busyTimeoutMs: number;
  configureDatabase: boolean;
  faults: SqliteFaults;
  migrationsFolder: string;
}

function isDatabase(value: unknown): value is SqliteDatabase {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { prepare?: unknown }).prepare === "function"
  );
}

export function resolveOptions(target: SqliteBackendTarget, options: SqliteBackendOptions): ResolvedOptions {
  const problems: string[] = [];
  const t = (target ?? {}) as { filename?: unknown; database?: unknown };
  const hasFile = t.filename !== undefined;
  const hasDb = t.database !== undefined;
  if (hasFile === hasDb) problems.push("pass exactly one of { filename } or { database }");
  if (hasFile && (typeof t.filename !== "string" || t.filename.length === 0)) {
    problems.push("filename must be a non-empty string");
  }
  if (hasDb && !isDatabase(t.database)) problems.push("database must be a better-sqlite3 Database");
  if (hasDb && isDatabase(t.database) && !t.database.open) problems.push("database is closed");
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  if (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0)
    problems.push("busyTimeoutMs must be an integer >= 0");
  if (problems.length > 0) {
    throw new SoniqError("SONIQ_INVALID_OPTIONS", `Invalid sqliteBackend options: ${problems.join("; ")}.`, {
      context: { problems },
    });
  }
  return Object.freeze({
    filename: hasFile ? (t.filename as string) : null,
    database: hasDb ? (t.database as SqliteDatabase) : null,
    busyTimeoutMs,
    configureDatabase: options.configureDatabase ?? true,
    faults: options.faults ?? {},
    migrationsFolder,
  });
}
