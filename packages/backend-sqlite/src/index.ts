export { type SqliteBackend, sqliteBackend } from "./backend.js";
export type { DrizzleSqliteHandle, SqliteTx } from "./internal/tx.js";
export { migrationsFolder } from "./migrations.js";
export type { SqliteBackendOptions, SqliteBackendTarget } from "./options.js";
