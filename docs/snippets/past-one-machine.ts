import { postgresBackend } from "@soniq/backend-postgres";
import { Soniq } from "@soniq/core";

// Workers and the app reach PostgreSQL through PgBouncer (transaction mode); wake-ups need a direct session.
export const soniq = new Soniq({
  backend: postgresBackend(
    { connectionString: "postgres://app@pgbouncer.internal:6432/app" }, // the connection, then the options
    {
      listenConnectionString: "postgres://app@db-primary.internal:5432/app", // LISTEN/NOTIFY, direct
      readConnectionString: "postgres://app@db-replica.internal:5432/app", // lists, stats, audit, metrics
      preparedStatements: false, // behind PgBouncer < 1.21; the default "auto" falls back by itself
    },
  ),
});

// How far the replica is behind (soniq status and the dashboard show it too).
export async function replicaLagMs(): Promise<number | null> {
  const status = await soniq.replication.status();
  return status.lagMs;
}
