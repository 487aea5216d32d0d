import { postgresBackend } from "@soniq/backend-postgres";

// #region snippet
postgresBackend(
  { connectionString: "postgres://app@pgbouncer:6432/app" },
  { preparedStatements: false, listenConnectionString: "postgres://app@db:5432/app" },
);
// #endregion snippet
