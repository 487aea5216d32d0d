/** `postgresBackend` options: the connection, the options object, and their validation (every problem in one error). */
import type pg from "pg";

/** Where the backend gets its connections: a URL (the backend owns the pool) or your pool (left open). */
export type PostgresConnection =
  | {
      connectionString: string;
      /** Extra node-postgres pool settings for the pool the backend creates (default `max` 10). */
      poolConfig?: Omit<pg.PoolConfig, "connectionString">;
    }
  | { pool: pg.Pool };

/** How workers learn about new jobs: LISTEN/NOTIFY, or polling only (README: "Through a pooler"). */
export type PostgresListenMode = "auto" | "notify" | "poll";

export const LISTEN_MODES: readonly PostgresListenMode[] = ["auto", "notify", "poll"];

export interface PostgresBackendOptions {
  /**
   * Name the hot-path statements so each connection prepares them once (saves a parse and plan per call,
   * about 12-16 % of W1 drain and bulk-enqueue throughput). "auto" (default): named until the server
   * answers `prepared statement "..." already exists` (42P05) or `does not exist` (26000), which is what
   * a transaction-mode pooler that does not keep prepared statements answers (PgBouncer before 1.21, or
   * without `max_prepared_statements`); the statement is then sent again unnamed (it had not run) and
   * every later one too. false: never named (set it behind such a pooler to skip the first failure).
   * true: always named (a direct connection, or PgBouncer 1.21+ with `max_prepared_statements` > 0).
   */
  preparedStatements?: boolean | "auto";
  /**
   * Wake-ups. "auto" (default): LISTEN, after one NOTIFY round trip proves that notifications arrive
   * (they do not through a transaction-mode pooler); when the probe fails, subscribe rejects once per
   * worker, which logs one warning, and workers poll. "notify": LISTEN without the probe. "poll": never LISTEN.
   */
  listen?: PostgresListenMode;
  /**
   * A direct (not pooled) postgres:// URL for the LISTEN connection, when the main connection goes
   * through a transaction-mode pooler. Default: the main connection's settings.
   */
  listenConnectionString?: string;
  /**
   * A postgres:// URL of a read replica for the operator's reads (job, dead-letter, queue and worker
   * lists, stats, audit, metrics, as the dashboard and `soniq status` show them). Writes and every worker
   * statement use the main connection. The replica's lag is reported by `replication.status()`.
   */
  readConnectionString?: string;
  /**
   * Commit worker outcomes (`runs.settle`) without waiting for the WAL flush. Default false. Faster on the
   * worker's write path; after a crash of the database (not of a worker) the outcomes of the last moments
   * (about 3 x wal_writer_delay) can be lost, and those jobs go back through stale-worker recovery and run
   * again, as at-least-once delivery allows. Enqueues stay synchronous either way.
   */
  asyncOutcomes?: boolean;
}

// Every key of PostgresBackendOptions (the compiler checks none is missing or extra).
const OPTION_KEYS = Object.keys({
  preparedStatements: true,
  listen: true,
  listenConnectionString: true,
  readConnectionString: true,
  asyncOutcomes: true,
} satisfies Record<keyof PostgresBackendOptions, true>);

function connectionProblems(connection: unknown): string[] {
  if (typeof connection !== "object" || connection === null) {
    return ["pass { connectionString } or { pool }"];
  }
  const c = connection as { connectionString?: unknown; pool?: unknown };
  if (c.pool !== undefined && c.connectionString !== undefined) {
    return ["pass either connectionString or pool, not both"];
  }
  if (c.pool !== undefined) {
    const pool = c.pool as { query?: unknown; connect?: unknown };
    return typeof pool === "object" && typeof pool.connect === "function" && typeof pool.query === "function"
      ? []
      : ["pool must be a pg.Pool"];
  }
  if (typeof c.connectionString !== "string" || c.connectionString.length === 0) {
    return ["connectionString must be a non-empty postgres:// URL (or pass { pool })"];
  }
  return [];
}

function optionsProblems(options: unknown): string[] {
  if (options === undefined) return [];
  if (typeof options !== "object" || options === null) return ["options must be an object"];
  // A typo (or an option another version had) must not open a backend that silently lacks it.
  const problems = Object.keys(options)
    .filter((key) => !OPTION_KEYS.includes(key))
    .map((key) => `no option "${key}" (it takes ${OPTION_KEYS.join(", ")})`);
  const asyncOutcomes = (options as { asyncOutcomes?: unknown }).asyncOutcomes;
  if (asyncOutcomes !== undefined && typeof asyncOutcomes !== "boolean") {
    problems.push("asyncOutcomes must be a boolean");
  }
  const o = options as Record<string, unknown>;
  if (
    o.preparedStatements !== undefined &&
    typeof o.preparedStatements !== "boolean" &&
    o.preparedStatements !== "auto"
  ) {
    problems.push('preparedStatements must be true, false or "auto"');
  }
  if (o.listen !== undefined && !LISTEN_MODES.includes(o.listen as PostgresListenMode)) {
    problems.push(`listen must be one of ${LISTEN_MODES.map((m) => `"${m}"`).join(", ")}`);
  }
  for (const key of ["listenConnectionString", "readConnectionString"]) {
    if (o[key] !== undefined && (typeof o[key] !== "string" || o[key] === "")) {
      problems.push(`${key} must be a non-empty postgres:// URL`);
    }
  }
  if (o.listen === "poll" && o.listenConnectionString !== undefined) {
    problems.push('listenConnectionString has no use with listen: "poll"');
  }
  return problems;
}

/** Every problem with the connection and the options (empty when both are valid). */
export function optionProblems(connection: unknown, options: unknown): string[] {
  return [...connectionProblems(connection), ...optionsProblems(options)];
}
