/**
 * What every facet gets: the connection, a prepared-statement cache and the in-process wake-up fan-out;
 * plus the two ways an operation runs (`runSync`, `immediate`).
 */
import type Database from "better-sqlite3";
import { translateError } from "./errors.js";

export type SqliteDatabase = Database.Database;
export type Statement = Database.Statement;

export interface SqliteContext {
  readonly db: SqliteDatabase;
  /** Prepared once per connection and SQL text, reused on every call. */
  statement(sql: string, db?: SqliteDatabase): Statement;
  /** Like `statement`, for generated SQL: looked up by a short key, built only on the first call. */
  generated(key: string, build: () => string): Statement;
  /** Wake in-process subscribers of this backend object (after the current synchronous work). */
  notify(queue: string): void;
  /** Tell in-process finished-job subscribers about `ids` (after the current synchronous work). */
  finished(ids: readonly string[]): void;
}

/** Prepared statements per connection: the backend's own, and any caller connection passed as `tx`. */
export class StatementCache {
  readonly #byDb = new WeakMap<SqliteDatabase, Map<string, Statement>>();

  /** The statement for `key` on `db`; `key` is the SQL itself unless `build` makes the SQL from it. */
  get(db: SqliteDatabase, key: string, build?: () => string): Statement {
    let map = this.#byDb.get(db);
    if (!map) {
      map = new Map();
      this.#byDb.set(db, map);
    }
    let stmt = map.get(key);
    if (!stmt) {
      stmt = db.prepare(build ? build() : key);
      map.set(key, stmt);
    }
    return stmt;
  }
}

/**
 * Runs a synchronous database step now (before the caller's next `await`) and hands back a promise,
 * with SQLite errors translated. The backend's async interface wraps synchronous better-sqlite3 calls.
 */
export function runSync<T>(operation: string, fn: () => T): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (err) {
    return Promise.reject(translateError(err, operation));
  }
}

/**
 * `BEGIN IMMEDIATE` around `fn` (the write lock is taken before the first read), with the BEGIN and
 * COMMIT statements prepared once per connection. Inside an open transaction (a caller's `tx`),
 * better-sqlite3 nests it as a SAVEPOINT instead. A throw rolls everything `fn` wrote back.
 */
export function immediate<T>(ctx: SqliteContext, fn: () => T, db: SqliteDatabase = ctx.db): T {
  if (db.inTransaction) return db.transaction(fn)();
  ctx.statement("BEGIN IMMEDIATE", db).run();
  try {
    const result = fn();
    ctx.statement("COMMIT", db).run();
    return result;
  } catch (err) {
    if (db.inTransaction) ctx.statement("ROLLBACK", db).run();
    throw err;
  }
}
