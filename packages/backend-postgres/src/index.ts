export { type PostgresBackend, postgresBackend } from "./backend.js";
export type { DrizzlePgExecutor, PgTx } from "./internal/tx.js";
export { migrationsFolder } from "./migrations.js";
export type { PostgresBackendOptions, PostgresConnection, PostgresListenMode } from "./options.js";
