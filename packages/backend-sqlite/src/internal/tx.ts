/**
 * The `tx` a caller may pass to enqueue: a better-sqlite3 `Database`, or a Drizzle better-sqlite3
 * database or transaction. All three resolve to the better-sqlite3 connection the caller's
 * transaction is open on, so the insert runs on that connection and joins (or rolls back with) it.
 */

import { SoniqError } from "@soniq/core/backend";
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

/** Each connection's main database file (empty for an in-memory or temporary database). */
const mainFiles = new WeakMap<SqliteDatabase, string>();

function mainFile(db: SqliteDatabase): string {
  let file = mainFiles.get(db);
  if (file === undefined) {
    const rows = db.pragma("database_list") as { name: string; file: string }[];
    file = rows.find((r) => r.name === "main")?.file ?? "";
    mainFiles.set(db, file);
  }
  return file;
}

/**
 * `db` when it is `own` or another connection to the same database file; else the insert would land in
 * a different database than the one this backend reads, so it is refused.
 */
function ownFile(db: SqliteDatabase, own: SqliteDatabase): SqliteDatabase {
  if (db === own) return db;
  const file = mainFile(db);
  if (file !== "" && file === mainFile(own)) return db;
  throw new SoniqError(
    "SONIQ_TRANSACTION_UNSUPPORTED",
    `The SQLite tx is a connection to another database (${file === "" ? "in-memory" : file}) than this ` +
      `backend's (${mainFile(own) || "in-memory"}); open the transaction on the backend's database file.`,
    { context: { txFile: file, backendFile: mainFile(own) } },
  );
}

/**
 * The better-sqlite3 connection behind `tx` (it must be open on `own`'s database file), or a
 * `SONIQ_TRANSACTION_UNSUPPORTED` error.
 */
export function resolveTxDatabase(tx: unknown, own: SqliteDatabase): SqliteDatabase {
  const db = txDatabase(tx);
  if (!db.open) {
    throw new SoniqError(
      "SONIQ_TRANSACTION_UNSUPPORTED",
      "The SQLite tx is a better-sqlite3 connection that is closed; pass the open connection your transaction runs on.",
      { context: { txFile: db.name } },
    );
  }
  return ownFile(db, own);
}

function txDatabase(tx: unknown): SqliteDatabase {
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
