/** The pool the backend runs on (its own, from a URL, or the caller's) and the settings of its dedicated connections. */
import { SoniqError } from "@soniq/core/backend";
import pg from "pg";
import { optionProblems, type PostgresBackendOptions, type PostgresConnection } from "../options.js";

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

/** Validate the connection and options (`SONIQ_INVALID_OPTIONS` naming every problem) and open or adopt the pool. */
export function resolveConnection(
  connection: PostgresConnection,
  options?: PostgresBackendOptions,
): ResolvedConnection {
  const problems = optionProblems(connection, options);
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
