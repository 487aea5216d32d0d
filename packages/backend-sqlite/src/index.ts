export { sqliteBackend } from "./backend.js";
export type { SqliteFaults } from "./context.js";
export { migrationsFolder } from "./migrate.js";
export type { SqliteBackendOptions, SqliteBackendTarget } from "./options.js";
export type { DrizzleSqliteHandle, SqliteTx } from "./tx.js";
