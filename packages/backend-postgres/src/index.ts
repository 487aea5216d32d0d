export { type PostgresBackend, postgresBackend } from "./backend.js";
export type { DeadLetterInterrupt, PostgresTestHooks } from "./context.js";
export { migrationsFolder } from "./migrate.js";
export type { PostgresBackendOptions, PostgresConnection } from "./options.js";
export type { DrizzlePgExecutor, PgTx } from "./tx.js";
