/**
 * The migrations facet: the SQL files drizzle-kit generated into `drizzle/` (plus the custom status-guard
 * migration), read with drizzle's `readMigrationFiles` and recorded in drizzle's own
 * `__drizzle_migrations` table, in drizzle's format, so drizzle-kit and drizzle's migrator agree with us.
 *
 * Why not call drizzle's better-sqlite3 `migrate()` directly: it reads the last applied migration
 * before its plain (deferred) `BEGIN`, so two processes migrating at once both decide to apply, and the
 * second fails on "table already exists" (or, for a data migration, would apply it twice). Here the
 * read and the apply share one `BEGIN IMMEDIATE` transaction: the second process waits for the write
 * lock (busy_timeout), then sees everything applied and does nothing. All pending files apply in that
 * one transaction, so a failure leaves the schema as it was.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type MigrationReport,
  type MigrationStatus,
  type MigrationsFacet,
  SoniqError,
} from "@soniq/core/backend";
import { readMigrationFiles } from "drizzle-orm/migrator";
import { runSync, type SqliteDatabase } from "./internal/context.js";

export function migrationsFacet(db: SqliteDatabase): MigrationsFacet {
  return {
    apply: () => runSync("migrations.apply", () => applyMigrations(db, migrationsFolder)),
    status: () => runSync("migrations.status", () => migrationStatus(db, migrationsFolder)),
  };
}

/** The folder of generated migrations; the same relative depth from src/ and dist/. */
export const migrationsFolder = fileURLToPath(new URL("../drizzle", import.meta.url));

const TABLE = "__drizzle_migrations";
// Exactly the table drizzle's SQLite migrator creates.
const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS "${TABLE}" (
  id SERIAL PRIMARY KEY,
  hash text NOT NULL,
  created_at numeric
)`;

interface Migration {
  tag: string;
  millis: number;
  hash: string;
  statements: string[];
}

function loadMigrations(folder: string): Migration[] {
  const journal = JSON.parse(readFileSync(join(folder, "meta", "_journal.json"), "utf8")) as {
    entries: { tag: string; when: number }[];
  };
  const files = readMigrationFiles({ migrationsFolder: folder });
  return files.map((file, i) => ({
    tag: journal.entries[i]?.tag ?? String(file.folderMillis),
    millis: file.folderMillis,
    hash: file.hash,
    statements: file.sql,
  }));
}

function lastAppliedMillis(db: SqliteDatabase): number | null {
  const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(TABLE);
  if (!exists) return null;
  const row = db.prepare(`SELECT created_at FROM "${TABLE}" ORDER BY created_at DESC LIMIT 1`).get() as
    | { created_at: number | string }
    | undefined;
  return row ? Number(row.created_at) : null;
}

/** drizzle's rule: a migration is applied when its timestamp is not after the last recorded one. */
function split(migrations: Migration[], last: number | null): { applied: Migration[]; pending: Migration[] } {
  const isApplied = (m: Migration) => last !== null && m.millis <= last;
  return { applied: migrations.filter(isApplied), pending: migrations.filter((m) => !isApplied(m)) };
}

export function migrationStatus(db: SqliteDatabase, folder: string): MigrationStatus {
  const { applied, pending } = split(loadMigrations(folder), lastAppliedMillis(db));
  return { applied: applied.map((m) => m.tag), pending: pending.map((m) => m.tag) };
}

export function applyMigrations(db: SqliteDatabase, folder: string): MigrationReport {
  const migrations = loadMigrations(folder);
  try {
    const appliedNow = db
      .transaction(() => {
        db.exec(CREATE_TABLE);
        const { pending } = split(migrations, lastAppliedMillis(db));
        const record = db.prepare(`INSERT INTO "${TABLE}" ("hash", "created_at") VALUES (?, ?)`);
        for (const migration of pending) {
          for (const statement of migration.statements) {
            if (statement.trim().length > 0) db.exec(statement);
          }
          record.run(migration.hash, migration.millis);
        }
        return pending.map((m) => m.tag);
      })
      .immediate();
    return { applied: migrations.map((m) => m.tag), pending: [], appliedNow };
  } catch (err) {
    throw new SoniqError("SONIQ_MIGRATION_FAILED", `Applying the SQLite migrations failed: ${String(err)}`, {
      context: { folder },
      cause: err,
    });
  }
}
