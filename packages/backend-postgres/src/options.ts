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

/**
 * Awaited inside a settle that holds dead_letter items, after the statement ran and before its
 * transaction commits; `session.pid` is the backend pid of the settle's connection, `jobId` the first
 * dead_letter item's id.
 */
export type DeadLetterInterrupt = (jobId: string, session: { pid: number }) => Promise<void> | void;

/** Test-only hooks (the conformance kit's fault injection). Never set them in production. */
export interface PostgresTestHooks {
  /**
   * Consulted before each `runs.settle` that holds dead_letter items. Return undefined for the normal
   * path (one statement on the pool). Return a function to run this settle instead inside an explicit
   * transaction on a dedicated connection, with the function awaited between the statement and COMMIT:
   * it may `pg_terminate_backend(session.pid)` from another connection, or throw, and the settle must
   * then reject and leave everything as it was.
   */
  interruptDeadLetterMove?: () => DeadLetterInterrupt | undefined;
}

export interface PostgresBackendOptions {
  /**
   * Commit worker outcomes (`runs.settle`) without waiting for the WAL flush. Default false. Faster on the
   * worker's write path; after a crash of the database (not of a worker) the outcomes of the last moments
   * (about 3 x wal_writer_delay) can be lost, and those jobs go back through stale-worker recovery and run
   * again, as at-least-once delivery allows. Enqueues stay synchronous either way.
   */
  asyncOutcomes?: boolean;
  /** Fault injection for conformance tests (see `PostgresTestHooks`). Never set it in production. */
  testHooks?: PostgresTestHooks;
}

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
  const problems: string[] = [];
  const asyncOutcomes = (options as { asyncOutcomes?: unknown }).asyncOutcomes;
  if (asyncOutcomes !== undefined && typeof asyncOutcomes !== "boolean") {
    problems.push("asyncOutcomes must be a boolean");
  }
  const hooks = (options as { testHooks?: unknown }).testHooks;
  if (hooks === undefined) return problems;
  if (typeof hooks !== "object" || hooks === null) return [...problems, "testHooks must be an object"];
  const interrupt = (hooks as { interruptDeadLetterMove?: unknown }).interruptDeadLetterMove;
  if (interrupt !== undefined && typeof interrupt !== "function") {
    problems.push("testHooks.interruptDeadLetterMove must be a function");
  }
  return problems;
}

/** Every problem with the connection and the options (empty when both are valid). */
export function optionProblems(connection: unknown, options: unknown): string[] {
  return [...connectionProblems(connection), ...optionsProblems(options)];
}
