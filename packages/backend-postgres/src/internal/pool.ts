/**
 * The pools the backend runs on (its own, from a URL, or the caller's; and its own read-replica pool when
 * `readConnectionString` is set) and the settings of the dedicated LISTEN connection.
 */
import { SoniqError } from "@soniq/core/backend";
import pg from "pg";
import { optionProblems, type PostgresBackendOptions, type PostgresConnection } from "../options.js";

export interface ResolvedConnection {
  pool: pg.Pool;
  /** True when the backend created the pool and must end it on close. */
  ownsPool: boolean;
  /** The operator's reads; the backend's own pool on the replica, else `pool`. */
  readPool: pg.Pool;
  /** Settings for the dedicated (non-pooled) LISTEN connection. */
  listenConfig: pg.ClientConfig;
}

// Every session the backend opens runs in UTC (a startup parameter: no extra round trip). A pooler that
// ignores it (PgBouncer's ignore_startup_parameters) is harmless: no statement depends on the session's
// time zone (timestamps are timestamptz, millisecond keys are taken AT TIME ZONE 'UTC').
function withUtc(options: string | undefined): string {
  return [options, "-c TimeZone=UTC"].filter(Boolean).join(" ");
}

function ownPool(config: pg.PoolConfig): pg.Pool {
  const pool = new pg.Pool({ ...config, options: withUtc(config.options) });
  // An idle pooled connection that dies (server restart) emits 'error' on the pool; without a listener
  // Node would crash the process. The next query simply gets a fresh connection.
  pool.on("error", () => {});
  return pool;
}

/** Validate the connection and options (`SONIQ_INVALID_OPTIONS` naming every problem) and open or adopt the pools. */
export function resolveConnection(
  connection: PostgresConnection,
  options: PostgresBackendOptions = {},
): ResolvedConnection {
  const problems = optionProblems(connection, options);
  if (problems.length > 0) {
    throw new SoniqError("SONIQ_INVALID_OPTIONS", `postgresBackend(): ${problems.join("; ")}.`, {
      context: { problems },
    });
  }
  const listenOverride = options.listenConnectionString;
  if ("pool" in connection) {
    const pool = connection.pool;
    const listenConfig: pg.ClientConfig = listenOverride
      ? { connectionString: listenOverride, options: withUtc(undefined) }
      : { ...pool.options };
    const readPool = options.readConnectionString
      ? ownPool({ max: 4, connectionString: options.readConnectionString })
      : pool;
    return { pool, ownsPool: false, readPool, listenConfig };
  }
  const config: pg.PoolConfig = {
    max: 10,
    ...connection.poolConfig,
    connectionString: connection.connectionString,
  };
  const pool = ownPool(config);
  const readPool = options.readConnectionString
    ? ownPool({
        ...config,
        max: Math.min(config.max ?? 10, 4),
        connectionString: options.readConnectionString,
      })
    : pool;
  const listenConfig: pg.ClientConfig = listenOverride
    ? { ...config, connectionString: listenOverride }
    : { ...config };
  listenConfig.options = withUtc(config.options);
  return { pool, ownsPool: true, readPool, listenConfig };
}
