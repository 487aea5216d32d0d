/** `postgresBackend` options: validated once (every problem in one error), defaults filled. */
import { SoniqError } from "@soniq/core";
import pg from "pg";
import type { PostgresTestHooks } from "./context.js";

/** Where the backend gets its connections: a URL (the backend owns the pool) or your pool (left open). */
export type PostgresConnection =
  | {
      connectionString: string;
      /** Extra node-postgres pool settings for the pool the backend creates (default `max` 10). */
      poolConfig?: Omit<pg.PoolConfig, "connectionString">;
    }
  | { pool: pg.Pool };

export interface PostgresBackendOptions {
  /**
   * Commit worker outcomes (complete, retry, nack, reschedule, dead-letter move) without waiting for the
   * WAL flush. Default false. Faster on the worker's write path; after a crash of the database (not of a
   * worker) the outcomes of the last moments (about 3 x wal_writer_delay) can be lost, and those jobs go
   * back through stale-worker recovery and run again, as at-least-once delivery allows. Enqueues stay
   * synchronous either way.
   */
  asyncOutcomes?: boolean;
  /** Fault injection for conformance tests (see `PostgresTestHooks`). Never set it in production. */
  testHooks?: PostgresTestHooks;
}

export interface ResolvedConnection {
  pool: pg.Pool;
  /** True when the backend created the pool and must end it on close. */
  ownsPool: boolean;
  /** Settings for the dedicated (non-pooled) LISTEN and lease connections. */
  clientConfig: pg.ClientConfig;
}

// Every session the backend opens runs in UTC (a startup parameter: no extra round trip).
function withUtc(options: string | undefined): string {
  return [options, "-c TimeZone=UTC"].filter(Boolean).join(" ");
}

function problemsOf(connection: unknown): string[] {
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

/** Every problem with the options object (empty when it is valid). */
export function optionProblems(options: unknown): string[] {
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

export function resolveConnection(
  connection: PostgresConnection,
  options?: PostgresBackendOptions,
): ResolvedConnection {
  const problems = [...problemsOf(connection), ...optionProblems(options)];
  if (problems.length > 0) {
    throw new SoniqError("SONIQ_INVALID_OPTIONS", `postgresBackend(): ${problems.join("; ")}.`, {
      context: { problems },
    });
  }
  if ("pool" in connection) {
    const pool = connection.pool;
    return { pool, ownsPool: false, clientConfig: { ...pool.options } };
  }
  const config: pg.PoolConfig = {
    max: 10,
    ...connection.poolConfig,
    connectionString: connection.connectionString,
  };
  config.options = withUtc(config.options);
  const pool = new pg.Pool(config);
  // An idle pooled connection that dies (server restart) emits 'error' on the pool; without a listener
  // Node would crash the process. The next query simply gets a fresh connection.
  pool.on("error", () => {});
  return { pool, ownsPool: true, clientConfig: config };
}
