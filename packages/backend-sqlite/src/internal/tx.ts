/**
 * The `tx` a caller may pass to enqueue: a better-sqlite3 `Database`, or a Drizzle better-sqlite3
 * database or transaction. All three resolve to the better-sqlite3 connection the caller's
 * transaction is open on, so the insert runs on that connection and joins (or rolls back with) it.
 */

import { SoniqError } from "@soniq/core";
import type Database from "better-sqlite3";
import type { BaseSQLiteDatabase } from "drizzle-orm/sqlite-core";
import type { SqliteDatabase } from "./context.js";

/** A Drizzle better-sqlite3 database or transaction (any schema). */
export type DrizzleSqliteHandle = BaseSQLiteDatabase<"sync", Database.RunResult, Record<string, unknown>>;

/** What `enqueue({ tx })` accepts on SQLite. */
export type SqliteTx = SqliteDatabase | DrizzleSqliteHandle;

function isBetterSqliteDatabase(value: unknown): value is SqliteDatabase {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.prepare === "function" &&
    typeof v.transaction === "function" &&
    typeof v.inTransaction === "boolean"
  );
}

/** The better-sqlite3 connection behind `tx`, or a `SONIQ_TRANSACTION_UNSUPPORTED` error. */
export function resolveTxDatabase(tx: unknown): SqliteDatabase {
  if (isBetterSqliteDatabase(tx)) return tx;
  if (typeof tx === "object" && tx !== null) {
    // A Drizzle database exposes its client as `$client`; a Drizzle transaction only through its session.
    const client = (tx as { $client?: unknown }).$client;
    if (isBetterSqliteDatabase(client)) return client;
    const session = (tx as { session?: unknown }).session;
    if (typeof session === "object" && session !== null) {
      const sessionClient = (session as { client?: unknown }).client;
      if (isBetterSqliteDatabase(sessionClient)) return sessionClient;
    }
  }
  throw new SoniqError(
    "SONIQ_TRANSACTION_UNSUPPORTED",
    "The SQLite backend's tx must be a better-sqlite3 Database or a Drizzle better-sqlite3 database or " +
      "transaction (drizzle-orm/better-sqlite3). Other drivers cannot join the transaction.",
    { context: { received: tx === null ? "null" : typeof tx } },
  );
}
